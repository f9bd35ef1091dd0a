/**
 * The web view's logins: one-time codes used once and only in time, sessions that need their
 * cookie, their key and this server's own page, cookie and Origin parsing under hostile input.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import fc from "fast-check";
import {
  cookieValue,
  KEY_HEADER,
  keyFromProtocols,
  MAX_SESSIONS,
  WebSessions,
} from "../../../src/http/web/sessions.ts";
import { sameOrigin } from "../../../src/http/security.ts";

const TOKEN = "0123456789abcdef0123456789abcdef";

function sessions(loginSeconds = 600) {
  return new WebSessions({ port: 4321, loginSeconds, sessionHours: 1 });
}

/** Headers of a request from the page at http://127.0.0.1:4321 with this session. */
function fromPage(cookie: string, key: string, extra: Record<string, string> = {}): Headers {
  return new Headers({
    host: "127.0.0.1:4321",
    origin: "http://127.0.0.1:4321",
    "sec-fetch-site": "same-origin",
    cookie: `other=1; ${cookie.split(";")[0]}`,
    [KEY_HEADER]: key,
    ...extra,
  });
}

Deno.test("a login code works once; a wrong code or token never", () => {
  const web = sessions();
  const code = web.newLoginCode();
  ok(code.length >= 43, "256 bits");
  assertEquals(web.login({ code: code + "x" }, TOKEN), undefined);
  assertEquals(web.login({ code: code.slice(0, -1) }, TOKEN), undefined);
  const first = web.login({ code }, TOKEN);
  ok(first);
  assertEquals(web.login({ code }, TOKEN), undefined, "used up");
  assertEquals(web.login({ token: TOKEN.slice(1) }, TOKEN), undefined);
  assertEquals(web.login({ token: TOKEN }, undefined), undefined);
  ok(web.login({ token: TOKEN }, TOKEN));
  ok(first.cookie.startsWith("winterm_session_4321="));
  for (const attribute of ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=3600"]) {
    ok(first.cookie.includes(attribute), attribute);
  }
  const cleared = web.logout(first.session);
  ok(cleared.startsWith("winterm_session_4321=;") && cleared.includes("Max-Age=0"), cleared);
});

Deno.test("an expired login code is refused", async () => {
  const web = new WebSessions({ port: 1, loginSeconds: 0.05, sessionHours: 1 });
  const code = web.newLoginCode();
  await new Promise((resolve) => setTimeout(resolve, 80));
  assertEquals(web.login({ code }, TOKEN), undefined);
});

Deno.test("a session needs its cookie, its key and this server's own page", () => {
  const web = sessions();
  const { session, cookie } = web.login({ token: TOKEN }, TOKEN)!;
  const verdict = (headers: Headers, method = "GET", stream = false) =>
    web.check(headers, method, stream);
  ok(verdict(fromPage(cookie, session.key)).ok);
  ok(verdict(fromPage(cookie, session.key), "POST").ok);
  // The key is required (a cookie sent to another port of localhost is not enough).
  assertEquals(verdict(fromPage(cookie, "")).ok, false);
  assertEquals(verdict(fromPage(cookie, session.key.slice(1))).ok, false);
  // Another origin, even on this host: refused; a GET without Origin is fine, a POST is not.
  const otherPort = fromPage(cookie, session.key, { origin: "http://127.0.0.1:8080" });
  const refused = verdict(otherPort);
  ok(!refused.ok && refused.status === 403);
  const noOrigin = fromPage(cookie, session.key);
  noOrigin.delete("origin");
  ok(verdict(noOrigin).ok);
  assertEquals(verdict(noOrigin, "POST").ok, false);
  assertEquals(verdict(noOrigin, "GET", true).ok, false, "a stream needs an Origin");
  const crossSite = fromPage(cookie, session.key, { "sec-fetch-site": "same-site" });
  assertEquals(verdict(crossSite).ok, false);
  // Streams carry the key as a subprotocol.
  const stream = fromPage(cookie, "", {
    "sec-websocket-protocol": `winterm, winterm.key.${session.key}`,
  });
  ok(verdict(stream, "GET", true).ok);
  // Logged out: the cookie is worth nothing.
  web.logout(session);
  assertEquals(verdict(fromPage(cookie, session.key)).ok, false);
});

Deno.test("sessions are capped: the least recently used goes", () => {
  const web = sessions();
  const logins = Array.from(
    { length: MAX_SESSIONS + 1 },
    () => web.login({ token: TOKEN }, TOKEN)!,
  );
  assertEquals(
    web.check(fromPage(logins[0].cookie, logins[0].session.key), "GET", false).ok,
    false,
  );
  ok(web.check(fromPage(logins[1].cookie, logins[1].session.key), "GET", false).ok);
});

Deno.test("cookie, origin and subprotocol parsing never throw and never match by accident", () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 200 }), fc.string({ maxLength: 60 }), (header, host) => {
      const value = cookieValue(header, "winterm_session_1");
      if (value !== undefined) ok(header.includes("winterm_session_1"));
      ok(!sameOrigin(header, null) && !sameOrigin(null, host));
      if (sameOrigin(header, host)) ok(/^https?:\/\//.test(header));
      const key = keyFromProtocols(header);
      if (key !== undefined) ok(header.includes("winterm.key."));
    }),
    { numRuns: 2000 },
  );
  assertEquals(cookieValue("a=1; winterm_session_1=xyz; b=2", "winterm_session_1"), "xyz");
  assertEquals(cookieValue("xwinterm_session_1=xyz", "winterm_session_1"), undefined);
  assertEquals(cookieValue("winterm_session_1=a; winterm_session_1=b", "winterm_session_1"), "a");
  assertEquals(cookieValue("winterm_session_1", "winterm_session_1"), undefined);
  ok(sameOrigin("http://LOCALHOST:3001", "localhost:3001"));
  ok(!sameOrigin("http://localhost:3002", "localhost:3001"));
  ok(!sameOrigin("null", "localhost:3001"));
  ok(!sameOrigin("file://", "localhost:3001"));
});
