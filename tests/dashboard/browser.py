"""Debian's headless Chromium driven through chromedriver, for the dashboard's page tests."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

# As root, in a container with no network: no sandbox, no GPU, nothing that phones home.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,1000",
]


def available() -> bool:
    return Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()


@contextmanager
def chromium(profile: Path) -> Iterator[object]:
    if not available():
        pytest.fail(
            "Chromium is missing: the test set-up installs it (apt-get install chromium "
            "chromium-driver; `make test` does this when run as root)"
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()


def console_errors(driver: object) -> list[dict]:
    """Severe console entries since the last call (the log is drained when read)."""
    return [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]  # type: ignore[attr-defined]
