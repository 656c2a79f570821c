"""Settings finds model servers on this machine, in a real Chromium against the app launched in this process: a
real HTTP server on a free loopback port speaking GET /v1/models (the port the screen probes is the
`discovery_ports` setting), one click to use a model, and the old endpoint's key not carried to the new one."""

from __future__ import annotations

import pytest

from tests.ui.conftest import free_port
from tests.ui.test_image_parts import models_server

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def settings_page(make_studio, page):
    """(page, studio, port): Settings open, the LLM section expanded; the studio probes one free port and holds a key
    for another endpoint."""
    from playwright.sync_api import expect

    from app.ui import launch
    from tests.conftest import shown

    port = free_port()
    studio = make_studio(
        discovery_ports=str(port), llm_base_url="http://127.0.0.1:9/v1", api_key="key-of-the-old-endpoint"
    )
    demo = launch(studio, port=free_port(), prevent_thread_lock=True, quiet=True)
    try:
        page.goto(demo.local_url)
        page.get_by_role("tab", name="Settings", exact=True).click()
        llm = page.get_by_text("The AI model behind the critics")
        shown(llm)  # opened before Gradio's frame after showing the tab, the section closes again
        llm.click()
        expect(page.locator("#settings_status")).to_contain_text("Making the pictures")
        shown(page.locator("#discover_btn"))
        yield page, studio, port
    finally:
        demo.close()


def use_a_discovered_model(page, port: int) -> None:
    """With nothing on the probed port the screen says so; then a server answers there: look again, click its
    second model."""
    from playwright.sync_api import expect

    expect(page.locator("#no_servers")).to_contain_text(
        f"No model server answered on this machine (127.0.0.1: A model server {port})"
    )
    with models_server(["qwen2.5vl:3b", "llama3.2:1b"], port=port):
        page.locator("#discover_btn").click()
        expect(page.locator("#server_list button.use")).to_have_count(2)
        page.locator("#server_list button.use", has_text="llama3.2:1b").click()
        expect(page.locator("#settings_status")).to_contain_text(f"127.0.0.1:{port}/v1")
        expect(page.locator("#server_list button.use.on")).to_have_text("llama3.2:1b")  # the one in use, marked


def test_the_discovered_server_is_listed_and_one_click_uses_a_model(settings_page, errors_free):
    from playwright.sync_api import expect

    page, studio, port = settings_page
    use_a_discovered_model(page, port)
    for field in ("#critic_model", "#refiner_model", "#planner_model"):
        expect(page.locator(f"{field} textarea, {field} input").first).to_have_value("llama3.2:1b")
    expect(page.locator("#llm_base_url input, #llm_base_url textarea").first).to_have_value(
        f"http://127.0.0.1:{port}/v1"
    )
    expect(page.locator("#status_bar")).to_contain_text("critic llama3.2:1b")  # shown where it always is
    c = studio.config
    assert (c.llm_base_url, c.critic_model, c.refiner_model, c.planner_model) == (
        f"http://127.0.0.1:{port}/v1",
        "llama3.2:1b",
        "llama3.2:1b",
        "llama3.2:1b",
    )


def test_a_discovered_server_never_gets_the_old_endpoints_key(settings_page, errors_free):
    from playwright.sync_api import expect

    page, studio, port = settings_page
    use_a_discovered_model(page, port)
    expect(page.locator("#settings_status")).to_contain_text("Key for the AI model: not set")
    assert studio.config.api_key == ""


@pytest.fixture
def errors_free(settings_page):
    page = settings_page[0]
    seen: list[str] = []
    page.on("pageerror", lambda e: seen.append(str(e)))
    yield
    assert not seen, seen
    assert "Traceback" not in page.content()
