"""The inspector page at /ui: in a real headless Chromium (Debian's, driven by Selenium through
the system chromedriver; the browser tests skip without them, and .ci/run installs them and
requires them), and over plain HTTP for escaping, scoping and the forms' checks.

Screenshots go to the test's tmp_path and, when MEMMAN_TEST_ARTIFACTS names a folder, there.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import httpx
import pytest

pytest.importorskip("starlette", reason="the serve extra is not installed")
pytest.importorskip("uvicorn", reason="the serve extra is not installed")

from memman import MemoryManager
from memman.config import load_settings
from memman.mem0 import Memory
from memman.serve.app import make_app
from tests.liveserver import running

# Read when the module loads: the autouse fixture clears MEMMAN_* variables for each test.
ARTIFACTS = os.environ.get("MEMMAN_TEST_ARTIFACTS")
BROWSER_REQUIRED = bool(os.environ.get("MEMMAN_TEST_BROWSER_REQUIRED"))
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
HOSTILE = "<script>document.title='owned'</script> likes <b>tags</b>"


def browser_missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install 'memman[test]')"
    for path in (CHROMIUM, CHROMEDRIVER):
        if not (Path(path).exists() or shutil.which(Path(path).name)):
            return f"{path} is missing: apt-get install -y chromium chromium-driver"
    return None


@pytest.fixture
def store(tmp_path) -> str:
    """alice with a few memories (one of them hostile markup) and a short-term fact; bob with
    one of his own."""
    path = str(tmp_path / "page.db")
    with MemoryManager(path) as manager:
        memory = Memory(manager=manager)
        for text in ("I live in Paris", "I am allergic to peanuts", "I like jazz", HOSTILE):
            memory.add(text, user_id="alice", infer=False)
        memory.add("I'm planning to watch a movie tonight", user_id="alice")
        memory.add("Bob's bank is Nordea", user_id="bob", infer=False)
    return path


@pytest.fixture
def served(store):
    with running(make_app(load_settings(db=store))) as url:
        yield url


def id_of(store: str, text: str, user: str = "alice") -> str:
    with MemoryManager(store) as manager:
        return next(m.id for m in manager.list(user_id=user) if m.content == text)


@pytest.fixture
def browser(tmp_path):
    missing = browser_missing()
    if missing:
        if BROWSER_REQUIRED:
            pytest.fail(f"MEMMAN_TEST_BROWSER_REQUIRED is set but {missing}")
        pytest.skip(missing)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",  # CI runs as root
        "--disable-dev-shm-usage",
        "--window-size=1100,1000",
        f"--user-data-dir={tmp_path / 'chromium'}",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.implicitly_wait(10)
    yield driver
    driver.quit()


def screenshot(driver, tmp_path: Path, name: str) -> Path:
    """A PNG of the page in tmp_path, and in MEMMAN_TEST_ARTIFACTS if set."""
    path = tmp_path / name
    assert driver.save_screenshot(str(path))
    if ARTIFACTS:
        Path(ARTIFACTS).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(ARTIFACTS) / name)
    return path


def follow(driver, element) -> None:
    """Click a link or a submit button and wait until the next page has replaced this one."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.wait import WebDriverWait

    page = driver.find_element(By.TAG_NAME, "html")
    element.click()

    def replaced(_) -> bool:
        # Chromium answers a question about a node of a document it is tearing down with
        # "Node with given id does not belong to the document" rather than a stale-element
        # error (seen once in CI): that too says the old page is gone.
        try:
            page.is_enabled()
        except StaleElementReferenceException:
            return True
        except WebDriverException as error:
            if "does not belong to the document" not in str(error):
                raise
            return True
        return False

    WebDriverWait(driver, 10).until(replaced)


def test_inspect_edit_and_see_the_new_event_in_a_browser(served, store, browser, tmp_path):
    from selenium.webdriver.common.by import By

    browser.get(f"{served}/")  # redirects to /ui: the picker lists both users
    users = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "ul.facts a")]
    assert users == ["alice", "bob"]
    browser.find_element(By.NAME, "user_id").send_keys("alice")
    follow(browser, browser.find_element(By.CSS_SELECTOR, "form button[type=submit]"))

    body = browser.find_element(By.TAG_NAME, "main").text
    assert "I live in Paris" in body and "I am allergic to peanuts" in body
    assert {"RESIDENCE", "ALLERGY", "LIKES"} <= set(body.splitlines())  # topic headings
    assert "Bob's bank" not in body
    assert "I'm planning to watch a movie tonight" in body  # the short-term fact
    assert HOSTILE in body and browser.title != "owned"  # shown as text, never run

    browser.find_element(By.NAME, "question").send_keys("what should I cook?")
    follow(browser, browser.find_element(By.XPATH, "//button[text()='Show block']"))
    assert "allergic to peanuts" in browser.find_element(By.CSS_SELECTOR, "pre.block").text
    screenshot(browser, tmp_path, "inspector-user.png")

    follow(browser, browser.find_element(By.LINK_TEXT, "I live in Paris"))
    assert browser.find_element(By.ID, "content").text == "I live in Paris"
    assert [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".event .op")] == ["ADD"]

    text = browser.find_element(By.CSS_SELECTOR, "form[action$='/edit'] input[name=text]")
    text.clear()
    text.send_keys("I live in Lyon")
    reason = browser.find_element(By.CSS_SELECTOR, "form[action$='/edit'] input[name=reason]")
    reason.send_keys("alice moved in May")
    follow(browser, browser.find_element(By.XPATH, "//button[text()='Save']"))

    assert browser.find_element(By.ID, "content").text == "I live in Lyon"
    assert browser.find_element(By.CSS_SELECTOR, ".note").text.startswith("UPDATE")
    newest = browser.find_elements(By.CSS_SELECTOR, ".event")[0]
    assert newest.find_element(By.CSS_SELECTOR, ".op").text == "UPDATE"
    assert "source: inspector: alice moved in May" in newest.text
    assert "I live in Paris" in newest.text and "I live in Lyon" in newest.text
    shot = screenshot(browser, tmp_path, "inspector-memory.png")
    assert shot.stat().st_size > 10_000

    # The library's own history says the same: the edit went through its write door.
    with MemoryManager(store) as manager:
        events = manager.history(id_of(store, "I live in Lyon"), user_id="alice")
    assert [(e.op.value, e.source) for e in events][-1] == (
        "UPDATE",
        "inspector: alice moved in May",
    )

    browser.set_window_size(390, 844)  # a phone
    browser.get(f"{served}/ui?user_id=alice")
    width = browser.execute_script("return document.documentElement.scrollWidth")
    assert width <= 390, f"the page scrolls sideways on a phone ({width}px)"
    screenshot(browser, tmp_path, "inspector-phone.png")


def test_delete_and_restore_in_a_browser(served, store, browser):
    from selenium.webdriver.common.by import By

    memory_id = id_of(store, "I like jazz")
    browser.get(f"{served}/ui/memory/{memory_id}?user_id=alice")
    browser.find_element(By.XPATH, "//summary[text()='Delete']").click()  # a closed box
    form = browser.find_element(By.CSS_SELECTOR, "form[action$='/delete']")
    form.find_element(By.NAME, "reason").send_keys("not true any more")
    follow(browser, form.find_element(By.TAG_NAME, "button"))
    assert browser.find_element(By.CSS_SELECTOR, ".status").text == "deleted"
    form = browser.find_element(By.CSS_SELECTOR, "form[action$='/restore']")
    form.find_element(By.NAME, "reason").send_keys("deleted by mistake")
    follow(browser, form.find_element(By.TAG_NAME, "button"))
    assert browser.find_element(By.CSS_SELECTOR, ".status").text == "active"
    reasons = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".event .reason")]
    assert reasons[:2] == ["deleted by mistake", "not true any more"]


# -- over plain HTTP: no browser needed ---------------------------------------------------------


def test_the_page_escapes_user_text(served):
    page = httpx.get(f"{served}/ui", params={"user_id": "alice"}).text
    assert "<script>document.title" not in page
    assert "&lt;script&gt;document.title=&#39;owned&#39;&lt;/script&gt;" in page
    assert '<meta name="viewport"' in page


def test_the_page_never_shows_another_users_memory(served, store):
    bobs = id_of(store, "Bob's bank is Nordea", "bob")
    page = httpx.get(f"{served}/ui/memory/{bobs}", params={"user_id": "alice"})
    assert page.status_code == 404 and "Nordea" not in page.text
    assert page.headers["content-type"].startswith("text/html")
    edit = httpx.post(
        f"{served}/ui/memory/{bobs}/edit",
        data={"user_id": "alice", "text": "Bob's bank is Evil", "reason": "x"},
    )
    assert edit.status_code == 404
    with MemoryManager(store) as manager:
        assert [m.content for m in manager.list(user_id="bob")] == ["Bob's bank is Nordea"]


def test_a_change_needs_a_reason_and_a_known_action(served, store):
    memory_id = id_of(store, "I like jazz")
    url = f"{served}/ui/memory/{memory_id}"
    refused = httpx.post(f"{url}/delete", data={"user_id": "alice", "reason": "  "})
    assert refused.status_code == 400 and "reason" in refused.text
    assert httpx.post(f"{url}/explode", data={"user_id": "alice", "reason": "x"}).status_code == 404
    done = httpx.post(f"{url}/delete", data={"user_id": "alice", "reason": "wrong"})
    assert done.status_code == 303 and done.headers["location"].startswith(
        f"/ui/memory/{memory_id}"
    )


def test_looking_changes_nothing(served, store):
    """The page's search and context block do not reinforce what they show."""
    httpx.get(f"{served}/ui", params={"user_id": "alice", "q": "jazz", "question": "music?"})
    with MemoryManager(store) as manager:
        assert {m.access_count for m in manager.list(user_id="alice")} == {0}


def test_an_edit_that_lands_in_another_memory_deletes_the_old_one(served, store):
    """'I like jazz' -> 'I like tea' is a second like, an ADD: the edited memory is deleted
    with the person's reason, pointing at the new one."""
    memory_id = id_of(store, "I like jazz")
    done = httpx.post(
        f"{served}/ui/memory/{memory_id}/edit",
        data={"user_id": "alice", "text": "I like tea", "reason": "misheard"},
    )
    assert done.status_code == 303
    new_id = id_of(store, "I like tea")
    assert done.headers["location"].startswith(f"/ui/memory/{new_id}")
    with MemoryManager(store) as manager:
        (*_, last) = manager.history(memory_id, user_id="alice")
    assert last.op.value == "DELETE" and last.reason.startswith("misheard")
    assert new_id in last.reason
