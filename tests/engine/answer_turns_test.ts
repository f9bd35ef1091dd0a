/**
 * Answer turns (src/engine/answer_turns.ts): one at a time, in order, each in a task of its
 * own; a call cancelled while it waits leaves the line without building its answer; turns go
 * round the clients that wait, so one client's many reads do not hold up another's.
 */
import { deepStrictEqual as assertEquals, ok, rejects } from "node:assert/strict";
import { inAnswerTurn } from "../../src/engine/answer_turns.ts";

Deno.test("answers take turns in order, one at a time, each in a task of its own", async () => {
  const log: string[] = [];
  let inside = 0;
  const turn = (name: string) =>
    inAnswerTurn(() => {
      ok(++inside === 1, "two turns at once");
      log.push(name);
      inside--;
      return name;
    });
  const [a, b, c] = [turn("a"), turn("b"), turn("c")];
  assertEquals(await a, "a");
  // The next turn waits for a task of its own: not begun when the first one's caller resumes.
  assertEquals(log, ["a"]);
  assertEquals(await Promise.all([b, c]), ["b", "c"]);
  assertEquals(log, ["a", "b", "c"]);
});

Deno.test("a call cancelled while it waits leaves the line: its answer is never built", async () => {
  // 100 reads cancelled in line still built their answers, one after another: the next read
  // waited 10 s.
  const built: number[] = [];
  const controllers = Array.from({ length: 20 }, () => new AbortController());
  const turns = controllers.map((controller, i) =>
    inAnswerTurn(() => {
      built.push(i);
    }, { signal: controller.signal })
  );
  for (const controller of controllers.slice(1)) controller.abort(new Error("cancelled"));
  await turns[0];
  for (const cancelled of turns.slice(1)) await rejects(cancelled, /cancelled/);
  assertEquals(built, [0]);
  // The line is free again.
  assertEquals(await inAnswerTurn(() => "next"), "next");
  // Cancelled before it asks: it never waits.
  const gone = new AbortController();
  gone.abort(new Error("gone"));
  await rejects(inAnswerTurn(() => built.push(99), { signal: gone.signal }), /gone/);
  assertEquals(built, [0]);
});

Deno.test("the only call waiting, cancelled after the turn before it ended, leaves the line free", async () => {
  // The next turn was handed on in a later task to whoever waited first: cancelled meanwhile,
  // there was no one, and the server crashed on calling nothing.
  let release!: () => void;
  const first = inAnswerTurn(() => new Promise<void>((resolve) => release = resolve));
  const controller = new AbortController();
  const second = inAnswerTurn(() => "second", { signal: controller.signal });
  await new Promise((resolve) => setTimeout(resolve, 0));
  release();
  await first;
  controller.abort(new Error("cancelled"));
  await rejects(second, /cancelled/);
  await new Promise((resolve) => setTimeout(resolve, 10));
  assertEquals(await inAnswerTurn(() => "third"), "third");
});

Deno.test("turns go round the clients: one client's forty answers do not hold up another's", async () => {
  // In order of arrival, a REST read behind one client's forty waited 5.4 s.
  const [busy, other] = [{}, {}];
  const log: string[] = [];
  const first = inAnswerTurn(() => log.push("busy 0"), { client: busy });
  const many = Array.from(
    { length: 40 },
    (_, i) => inAnswerTurn(() => log.push(`busy ${i + 1}`), { client: busy }),
  );
  const one = inAnswerTurn(() => log.push("other"), { client: other });
  const alone = inAnswerTurn(() => log.push("no client"));
  await Promise.all([first, ...many, one, alone]);
  // The other client and the caller of no client come in line after the first busy turn; the
  // busy client's second turn waits for them, having been served once.
  assertEquals(log.slice(0, 3), ["busy 0", "other", "no client"]);
  assertEquals(log.length, 43);
});
