"""Where settings come from: defaults < TOML file < environment < arguments, and one clear
ConfigError line for anything that cannot be used."""

import asyncio
import logging

import pytest

from memman import AsyncMemoryManager, MemoryManager, load_settings
from memman.errors import ConfigError
from tests.test_cli import memman  # noqa: F401 (fixture)


def test_defaults_without_file_or_environment():
    settings = load_settings()
    assert settings.db == "memman.db" and settings.top_k == 8 and settings.llm_model is None


@pytest.mark.parametrize("text", ["top_k = 3\n", "[memman]\ntop_k = 3\n"])
def test_the_file_sets_keys_at_top_level_or_under_memman(tmp_path, text):
    (tmp_path / "memman.toml").write_text(text)
    assert load_settings().top_k == 3


def test_memman_config_names_the_file_instead_of_the_local_one(tmp_path, monkeypatch):
    (tmp_path / "memman.toml").write_text("top_k = 3\n")
    (tmp_path / "other.toml").write_text("top_k = 5\n")
    monkeypatch.setenv("MEMMAN_CONFIG", str(tmp_path / "other.toml"))
    assert load_settings().top_k == 5


def test_environment_beats_the_file_and_arguments_beat_both(tmp_path, monkeypatch):
    (tmp_path / "memman.toml").write_text('decider = "llm"\nllm_model = "from-file"\n')
    monkeypatch.setenv("MEMMAN_LLM_MODEL", "from-env")
    settings = load_settings()
    assert (settings.decider, settings.llm_model) == ("llm", "from-env")
    assert load_settings(llm_model="from-args").llm_model == "from-args"
    assert load_settings(llm_model=None).llm_model == "from-env"  # None: not given


def test_the_manager_reads_the_same_sources(tmp_path, monkeypatch):
    (tmp_path / "memman.toml").write_text("top_k = 3\n")
    monkeypatch.setenv("MEMMAN_DECIDER", "offline")
    with MemoryManager(str(tmp_path / "m.db"), noop_jaccard=0.9) as mm:
        assert (mm.settings.top_k, mm.settings.decider, mm.settings.noop_jaccard) == (
            3,
            "offline",
            0.9,
        )
        assert mm.settings.db == str(tmp_path / "m.db")


def test_openai_variables_and_the_short_timeout_name(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("MEMMAN_LLM_TIMEOUT", "7.5")
    settings = load_settings()
    assert (settings.llm_base_url, settings.llm_api_key, settings.llm_timeout_s) == (
        "http://127.0.0.1:9/v1",
        "sk-test",
        7.5,
    )


def test_an_empty_variable_is_not_set(monkeypatch):
    monkeypatch.setenv("MEMMAN_DB", "")
    monkeypatch.setenv("MEMMAN_LLM_MODEL", "")
    settings = load_settings()
    assert settings.db == "memman.db" and settings.llm_model is None


def test_values_from_the_environment_are_validated(monkeypatch):
    monkeypatch.setenv("MEMMAN_VECTOR_CACHE_MB", "0")
    with pytest.raises(ConfigError, match=r"^invalid configuration: vector_cache_mb: "):
        load_settings()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("top_k = \n", r"^cannot read config file .*memman\.toml: "),
        ("top_k = 0\n", r"^invalid configuration: top_k: "),
        ("topk = 3\n", r"^invalid configuration: topk: "),
    ],
)
def test_a_bad_file_is_one_config_error(tmp_path, text, message):
    (tmp_path / "memman.toml").write_text(text)
    with pytest.raises(ConfigError, match=message) as caught:
        load_settings()
    assert "\n" not in str(caught.value)


def test_a_missing_named_file_is_a_config_error(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMMAN_CONFIG", str(tmp_path / "absent.toml"))
    with pytest.raises(ConfigError, match=r"^cannot read config file .*absent\.toml"):
        load_settings()


def test_every_setting_is_a_memman_variable(monkeypatch):
    monkeypatch.setenv("MEMMAN_TOP_K", "3")
    monkeypatch.setenv("MEMMAN_SHORT_TERM_TTL_HOURS", '{"default": 2}')
    settings = load_settings()
    assert settings.top_k == 3 and settings.short_term_ttl_hours == {"default": 2.0}


def test_a_table_variable_that_is_not_json_is_one_config_error(monkeypatch):
    monkeypatch.setenv("MEMMAN_SHORT_TERM_TTL_HOURS", "default=2")
    with pytest.raises(ConfigError, match=r"^invalid configuration: .*short_term_ttl_hours") as e:
        load_settings()
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("url", ["localhost:11434/v1", "127.0.0.1:8080", "ftp://host/v1"])
def test_a_base_url_without_http_is_refused_before_any_fact_is_parked(tmp_path, monkeypatch, url):
    # "localhost:11434/v1" (no scheme) failed every call: each fact parked with a connection
    # error, the typo never named. It must be one ConfigError when the settings load.
    monkeypatch.setenv("MEMMAN_LLM_MODEL", "qwen2.5:7b")
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    with pytest.raises(ConfigError, match=r"llm_base_url: .*http:// or https://"):
        load_settings()
    with pytest.raises(ConfigError, match="llm_base_url"):
        MemoryManager(str(tmp_path / "m.db"))
    assert not (tmp_path / "m.db").exists()


@pytest.mark.parametrize("path", ["", "  "])
def test_an_empty_db_path_is_refused_not_a_throwaway_store(path):
    # SQLite opens "" as a private temporary database, deleted at close: `--db "$UNSET"` wrote
    # the fact there, reported ADD and lost it.
    with pytest.raises(ConfigError, match=r"db: .*empty"):
        MemoryManager(path)


def test_a_db_path_holding_a_nul_byte_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match=r"db: .*NUL"):  # was os's untyped ValueError
        MemoryManager(str(tmp_path / "a\x00b.db"))


def test_the_cli_refuses_an_empty_db_in_one_line(memman):  # noqa: F811
    run = memman("add", "User likes tea", "--user", "alice", "--db", "")
    assert run.code == 1 and run.out == "" and "db: " in run.err


def test_a_config_file_that_is_not_utf8_is_one_config_error(tmp_path, monkeypatch, memman):  # noqa: F811
    path = tmp_path / "memman.toml"
    path.write_bytes(b"top_k = 3\n# caf\xe9 au lait\n")  # saved as Latin-1
    monkeypatch.setenv("MEMMAN_CONFIG", str(path))
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_settings()
    run = memman("config")  # was a UnicodeDecodeError traceback
    assert run.code == 1 and run.err.startswith("Error: cannot read config file")


def test_memman_config_naming_a_folder_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMMAN_CONFIG", str(tmp_path))  # it said "no such file"
    with pytest.raises(ConfigError, match="not a file"):
        load_settings()


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("MEMMAN_SHORT_TERM_TTL_HOURS", '{"default": -5}'),  # stored already expired
        ("MEMMAN_SHORT_TERM_TTL_HOURS", '{"plan": NaN}'),
        ("MEMMAN_SHORT_TERM_TTL_HOURS", '{"default": 1e12}'),
        ("MEMMAN_EXTRACT_COOLDOWN_S", "inf"),
        ("MEMMAN_EXTRACT_COOLDOWN_S", "1e300"),
        ("MEMMAN_LEASE_S", "1e300"),
        ("MEMMAN_MESSAGE_RETENTION_DAYS", "inf"),
        ("MEMMAN_BUSY_TIMEOUT_S", "inf"),
        ("MEMMAN_VECTOR_CACHE_MB", "inf"),
        ("MEMMAN_JOURNAL_SIZE_LIMIT_MB", "inf"),
    ],
)
def test_a_time_span_or_size_no_clock_can_hold_is_refused_when_loaded(
    tmp_path, monkeypatch, variable, value
):
    # Each was accepted, then every observe, flush or remember_short_term raised an untyped
    # OverflowError or ValueError (timedelta of infinity, a date past year 9999), or a
    # negative TTL stored every transient fact already expired.
    monkeypatch.setenv(variable, value)
    name = variable.removeprefix("MEMMAN_").lower()
    with pytest.raises(ConfigError, match=rf"^invalid configuration: {name}"):
        MemoryManager(str(tmp_path / "m.db"))


def test_a_century_is_still_a_time_span(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMMAN_SHORT_TERM_TTL_HOURS", '{"default": 876000, "plan": 0.5}')
    monkeypatch.setenv("MEMMAN_MESSAGE_RETENTION_DAYS", "36500")
    with MemoryManager(str(tmp_path / "m.db")) as mm:
        fact = mm.remember_short_term("User is at the airport", user_id="u", session_id="s")
        assert fact.expires_at.startswith("2126-")
        mm.observe([{"role": "user", "content": "I have a dog"}], user_id="u", session_id="s")
        assert [m.content for m in mm.list(user_id="u")] == []
        mm.flush("s", user_id="u")
        assert [m.content for m in mm.list(user_id="u")] == ["I have a dog"]


def test_the_store_path_may_be_a_pathlib_path(tmp_path):
    # pytest's tmp_path / "m.db", Path.home() / ...: refused with "db: Input should be a
    # valid string", though sqlite3, open() and memman.mem0.Memory all take one.
    path = tmp_path / "m.db"
    with MemoryManager(path) as mm:
        mm.update_memory("User likes tea", user_id="alice")
        assert mm.path == str(path) and mm.settings.db == str(path)
    with MemoryManager(str(path)) as mm:
        assert [m.content for m in mm.list(user_id="alice")] == ["User likes tea"]

    async def read() -> list[str]:
        async with AsyncMemoryManager(path) as amm:
            return [m.content for m in await amm.list(user_id="alice")]

    assert asyncio.run(read()) == ["User likes tea"]


def test_attribute_settings_are_matched_as_attributes_are_stored(tmp_path):
    # Attributes are stored as labels ("relationship_status"); the settings were compared
    # as written, so safety_attributes = ["Allergy"] kept no allergy in the context core and
    # single_valued_attributes = ["Employer"] let two employers stay current side by side.
    settings = {"safety_attributes": [" Allergy"], "single_valued_attributes": ["Employer"]}
    with MemoryManager(str(tmp_path / "m.db"), **settings) as mm:
        assert mm.settings.safety_attributes == ["allergy"]
        mm.update_memory("User is allergic to peanuts", user_id="u")
        mm.update_memory("User likes hiking in the Alps", user_id="u")
        block = mm.context("hiking", user_id="u", max_tokens=500)
        assert "peanuts" in "".join(m.content for m in block.core)
        mm.update_memory("User works at Acme", user_id="u")
        mm.update_memory("User works at Globex", user_id="u")
        assert "User works at Acme" not in [m.content for m in mm.list(user_id="u")]


def test_settings_and_setting_keywords_together_are_refused_not_half_ignored(tmp_path):
    # MemoryManager(path, settings=s, top_k=3) ran with s.top_k: the keyword was dropped
    # without a word (and decider="offline" the same way).
    settings = load_settings(top_k=5)
    with pytest.raises(ConfigError, match="top_k"):
        MemoryManager(str(tmp_path / "m.db"), settings=settings, top_k=3)
    with pytest.raises(ConfigError, match="decider"):
        MemoryManager(str(tmp_path / "m.db"), settings=settings, decider="offline")
    with MemoryManager(str(tmp_path / "m.db"), settings=settings) as mm:
        assert mm.settings.top_k == 5


def test_a_short_api_key_is_not_shown_whole():
    assert load_settings(llm_api_key="abc").redacted()["llm_api_key"] == "…"
    assert load_settings(llm_api_key="sk-proj-0123456789").redacted()["llm_api_key"] == "sk-…"


def test_config_shows_each_memman_variable_no_setting_reads(memman, monkeypatch, tmp_path):  # noqa: F811
    """A misspelt setting ("MEMMAN_LLM_MODLE") was skipped without a word and the model left
    unset; one line each now says so, naming the setting meant when one is close. A name of
    the user's own (MEMMAN_MY_TOOL) is shown too, but refused by nothing; the names memman
    reads besides the settings' (MEMMAN_CONFIG, the CLI's MEMMAN_DB, the older
    MEMMAN_LLM_TIMEOUT, its own tests' and benchmarks' MEMMAN_DATA) are not shown."""
    (tmp_path / "mine.toml").write_text("top_k = 3\n")
    monkeypatch.setenv("MEMMAN_LLM_MODLE", "gpt-4o")
    monkeypatch.setenv("MEMMAN_MY_TOOL", "1")
    monkeypatch.setenv("MEMMAN_DATA", str(tmp_path))
    monkeypatch.setenv("MEMMAN_DB", str(tmp_path / "m.db"))
    monkeypatch.setenv("MEMMAN_CONFIG", str(tmp_path / "mine.toml"))
    monkeypatch.setenv("MEMMAN_LLM_TIMEOUT", "5")
    run = memman("config")
    assert run.code == 0, run.output
    ignored = [line for line in run.out.splitlines() if " is ignored" in line]
    assert ignored == [
        "MEMMAN_LLM_MODLE is ignored: memman has no setting of that name"
        " (did you mean MEMMAN_LLM_MODEL?)",
        "MEMMAN_MY_TOOL is ignored: memman has no setting of that name",
    ]


def test_opening_a_store_warns_of_each_ignored_variable_once(tmp_path, monkeypatch, caplog):
    """Logged, not printed (the library never prints), and once per process: a program that
    opens a manager per request would repeat the same line at every open. The names here are
    this test's own, so no other test of the run has warned of them first."""
    monkeypatch.setenv("MEMMAN_EMBEDER", "local")
    monkeypatch.setenv("MEMMAN_NOT_A_SETTING_OF_THIS_TEST", "1")
    monkeypatch.setenv("MEMMAN_TOP_K", "3")
    with caplog.at_level(logging.WARNING, logger="memman.config"):
        with MemoryManager(str(tmp_path / "a.db")) as mm:
            assert mm.settings.top_k == 3 and mm.settings.embedder == "none"
        load_settings()
    warnings = [r.getMessage() for r in caplog.records if r.name == "memman.config"]
    assert warnings == [
        "MEMMAN_EMBEDER is ignored: memman has no setting of that name"
        " (did you mean MEMMAN_EMBEDDER?)",
        "MEMMAN_NOT_A_SETTING_OF_THIS_TEST is ignored: memman has no setting of that name",
    ]
