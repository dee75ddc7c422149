"""The API's docs page (swagger-ui from the app's own static files) renders under the CSP."""

from __future__ import annotations

from playwright.sync_api import expect


def test_the_api_docs_page_renders_under_the_csp(page, server):
    # `page` fails the test on any Content-Security-Policy report
    # Every asset loads: no network failure and no error status. A request the browser
    # cancelled itself (net::ERR_ABORTED: the favicon's, when the docs move to an anchor
    # before it arrived on a busy machine) is not the page's failure.
    failed: list[tuple[str, object]] = []
    page.on(
        "requestfailed",
        lambda r: None if r.failure == "net::ERR_ABORTED" else failed.append((r.url, r.failure)),
    )
    page.on("response", lambda r: failed.append((r.url, r.status)) if r.status >= 400 else None)
    page.goto(server.url + "/api/v1/docs")
    expect(page.locator(".swagger-ui .information-container .title")).to_contain_text(
        "Inline-questionnaire chat API"
    )
    paths = page.locator(".opblock-summary-path")
    expect(paths.first).to_be_visible()
    assert any(
        "/api/v1/conversations/{conversation_id}/messages" in p for p in paths.all_inner_texts()
    )
    page.locator(".opblock-summary-path", has_text="/api/v1/conversations/").first.click()
    expect(page.locator(".opblock-body").first).to_be_visible()
    assert failed == [], failed


def test_the_api_docs_page_leads_back_to_the_chat(page, server):
    page.goto(server.url + "/api/v1/docs")
    back = page.get_by_role("link", name="← Back to the chat")
    expect(back).to_be_visible()
    expect(page.locator(".swagger-ui .information-container .title")).to_be_visible()
    # Above Swagger UI, not buried under it: the first thing on the page.
    box = back.bounding_box()
    assert box is not None and box["y"] < 60
    back.click()
    page.wait_for_url(server.url + "/")
