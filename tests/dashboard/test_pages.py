"""Every page of a real daemon's dashboard, driven in headless Chromium."""

from __future__ import annotations

from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from tests.dashboard.browser import chromium, console_errors
from tests.dashboard.conftest import Served

pytestmark = pytest.mark.store

HOOKS = [
    "pre-work-selection",
    "pre-spawn-pack",
    "post-run-harvest",
    "failure-diagnosis",
    "post-retro-harvest",
]


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory):
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as driver:
        yield driver


def visit(browser, served: Served, path: str, shots: Path, name: str) -> None:
    browser.get(served.url.rstrip("/") + path)
    assert "executive" in browser.title
    shots.mkdir(exist_ok=True)
    browser.save_screenshot(str(shots / f"{name}.png"))
    assert console_errors(browser) == [], f"console errors on {path}"


def text(browser, css: str) -> str:
    return browser.find_element(By.CSS_SELECTOR, css).text


def test_overview(demo, browser, tmp_path):
    visit(browser, demo, "/", tmp_path, "overview")
    assert text(browser, "h1") == "Overview"
    assert text(browser, "#loop-state").startswith(("ticking", "busy"))
    hooks = text(browser, "#hooks")
    for hook in HOOKS:
        assert hook in hooks
    assert "V3_MEM_HOOK_PRE_WORK off" in hooks  # off, and why
    queue = text(browser, "#queue")
    assert "completed 3" in queue and "blocked 1" in queue
    by_type = {
        row.find_element(By.TAG_NAME, "th").text: int(row.find_element(By.TAG_NAME, "td").text)
        for row in browser.find_elements(By.CSS_SELECTOR, "#by-type tr")
    }
    assert by_type["principle"] > 0 and by_type["episodic"] > 0
    assert text(browser, "#pending-writes") == "0"
    assert text(browser, "#drift").startswith("none")
    assert browser.find_elements(By.CSS_SELECTOR, "#iterations tr td")
    assert browser.find_element(By.ID, "main").get_attribute("data-live") == "7"  # the setting
    # Live refresh swaps the page in place, and the console stays clean while it does; this
    # tab asks for a refresh every second. (The footer's stamp is outside what is swapped; the
    # heading is read in one script, so a swap cannot come between finding and reading it.)
    browser.get(demo.url.rstrip("/") + "/?refresh=1")
    WebDriverWait(browser, 30).until(
        lambda b: b.find_element(By.ID, "refreshed").text.startswith("refreshed")
    )
    assert browser.execute_script("return document.querySelector('h1').textContent") == "Overview"
    assert console_errors(browser) == []


def test_bundles_with_steps_errors_diagnosis_and_packs(demo, browser, tmp_path):
    visit(browser, demo, "/bundles", tmp_path, "bundles")
    greeting = text(browser, "#bundle-demo-greeting")
    assert "completed" in greeting and "Write" in greeting
    failing = text(browser, "#bundle-always-fails")
    assert "blocked" in failing
    assert "mirror refused credentials [REDACTED]" in failing  # last error, redacted
    assert "Hook D's diagnosis" in failing
    assert browser.find_elements(By.CSS_SELECTOR, "#bundle-always-fails .diagnosis")
    assert browser.find_elements(By.CSS_SELECTOR, "svg.chart rect[data-series='blocked']")
    flaky = browser.find_element(By.ID, "bundle-demo-flaky-fetch")
    links = flaky.find_elements(By.CSS_SELECTOR, ".spawns a")
    assert len(links) == 2  # the failed attempt and the retry, each with its pack
    links[-1].click()
    assert "Pack for demo-flaky-fetch" in text(browser, "h1")
    assert console_errors(browser) == []


def test_hook_runs_filtered(demo, browser, tmp_path):
    visit(browser, demo, "/hooks", tmp_path, "hooks")
    hooks = {r.get_attribute("data-hook") for r in browser.find_elements(By.CSS_SELECTOR, "tr.run")}
    assert {
        "pre-spawn-pack",
        "post-run-harvest",
        "failure-diagnosis",
        "post-retro-harvest",
    } <= hooks
    first = browser.find_element(By.CSS_SELECTOR, "tr.run")
    cells = [c.text for c in first.find_elements(By.TAG_NAME, "td")]
    assert cells[3] == "builtin" and cells[4] in {"ok", "failed"} and cells[5].isdigit()
    assert browser.find_elements(
        By.CSS_SELECTOR, "svg.chart polyline[data-series='pre-spawn-pack']"
    )
    Select(browser.find_element(By.NAME, "hook")).select_by_visible_text("failure-diagnosis")
    browser.find_element(By.CSS_SELECTOR, ".filters button").click()
    WebDriverWait(browser, 30).until(lambda b: "hook=failure-diagnosis" in b.current_url)
    rows = browser.find_elements(By.CSS_SELECTOR, "tr.run")
    assert rows and {r.get_attribute("data-hook") for r in rows} == {"failure-diagnosis"}
    assert "memory." in rows[0].text  # its tool histogram
    browser.save_screenshot(str(tmp_path / "hooks-filtered.png"))
    assert console_errors(browser) == []


def test_packs_beside_the_readers_trace(demo, browser, tmp_path):
    visit(browser, demo, "/packs", tmp_path, "packs")
    rows = browser.find_elements(By.CSS_SELECTOR, "#packs tr")[1:]
    assert len(rows) >= 6  # one per spawn: 2 + 2 + 1 + 3
    rows[-1].find_element(By.TAG_NAME, "a").click()
    WebDriverWait(browser, 30).until(lambda b: "/packs/contract-" in b.current_url)
    browser.save_screenshot(str(tmp_path / "pack.png"))
    assert console_errors(browser) == []
    assert "## " in text(browser, "pre.pack") or "memory" in text(browser, "pre.pack").lower()
    questions = browser.find_elements(By.CSS_SELECTOR, ".trace ol.questions > li")
    assert questions  # each with why it was asked and what each scope returned
    for question in questions:
        assert " — " in question.text and ("project " in question.text or "global" in question.text)
    assert text(browser, ".trace .stop-reason")


def test_memory_browse_search_and_history(demo, browser, tmp_path):
    visit(browser, demo, "/memory", tmp_path, "memory")
    assert int(text(browser, "#memory-count").split()[0]) > 0
    assert browser.find_elements(By.CSS_SELECTOR, "svg.chart polyline[data-series='principle']")
    Select(browser.find_element(By.NAME, "type")).select_by_visible_text("principle")
    browser.find_element(By.CSS_SELECTOR, "#memory-filters button").click()
    WebDriverWait(browser, 30).until(lambda b: "type=principle" in b.current_url)
    kinds = {
        r.get_attribute("data-type") for r in browser.find_elements(By.CSS_SELECTOR, "tr.memory")
    }
    assert kinds == {"principle"}
    Select(browser.find_element(By.NAME, "type")).select_by_visible_text("any")
    search = browser.find_element(By.NAME, "q")
    search.send_keys("What went wrong when fetching from the mirror?")
    browser.find_element(By.CSS_SELECTOR, "#memory-filters button").click()
    WebDriverWait(browser, 60).until(lambda b: b.find_elements(By.CSS_SELECTOR, ".trace"))
    browser.save_screenshot(str(tmp_path / "memory-search.png"))
    assert text(browser, ".trace .stop-reason")
    assert browser.find_elements(By.CSS_SELECTOR, "tr.memory")
    browser.find_element(By.CSS_SELECTOR, "tr.memory a").click()
    WebDriverWait(browser, 30).until(lambda b: b.find_elements(By.ID, "history"))
    assert text(browser, "#memory-text")
    assert "ADD" in text(browser, "#history").upper()
    browser.save_screenshot(str(tmp_path / "memory-item.png"))
    assert console_errors(browser) == []


def test_a_missing_pack_is_a_404_page_not_an_error(demo, browser, tmp_path):
    browser.get(demo.url + "packs/contract-0")
    assert "no pack kept" in text(browser, ".note")
    # The only console entry is the browser's own note of the 404 status.
    assert all("404" in e["message"] for e in console_errors(browser))


def test_the_probes_open_in_the_browser_too(demo, browser, tmp_path):
    browser.get(demo.url + "metrics")
    assert "executive_iterations_total" in browser.find_element(By.TAG_NAME, "body").text
    browser.get(demo.url + "healthz")
    WebDriverWait(browser, 30).until(
        lambda b: (
            '"status": "ok"' in b.find_element(By.TAG_NAME, "body").text or b.refresh()
        )  # a busy machine may catch the loop between ticks: ask again
    )
    browser.save_screenshot(str(tmp_path / "healthz.png"))
    assert console_errors(browser) == []
