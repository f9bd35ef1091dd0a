/**
 * Waiting for input (`terminal_wait {input: true}`) through the real server, for programs that
 * read the terminal by a name other than the one it was opened as (Linux): getpass, `read <
 * /dev/tty`, poll, select and epoll on /dev/tty, a reader that is not its group's leader, the
 * same device under another name; and what must not count: a wait on /dev/tty and a pipe at
 * once, a program reading its own /dev/tty inside another terminal. Each answer of `input`
 * holds the prompt the program printed before it began to wait, every time, beside load.
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { type Connection, serverTest } from "../../helpers/mcp.ts";
import { tempDir } from "../../helpers/process.ts";
import { has } from "../../helpers/shells.ts";

const linux = Deno.build.os === "linux";
const PYTHON = has("python3") ? "/usr/bin/python3" : "python3";

interface Waited {
  condition: string;
  output: string;
  exitStatus?: { exitCode: number | null; signal: string | null };
}

/**
 * A program that opens a terminal (/dev/tty unless a path is given), prints a prompt to it and
 * waits for a line the way `mode` says: `read`, `poll`, `select`, `epoll`, or `both` (select on
 * the terminal and a pipe, then, once a line came, on the terminal alone).
 */
const READER = `
import os, select, sys
mode = sys.argv[1]
tty = os.open(sys.argv[2] if len(sys.argv) > 2 else "/dev/tty", os.O_RDWR | os.O_NOCTTY)
def ask(prompt):
    os.write(tty, prompt.encode())
if mode == "poll":
    ask("Poll: ")
    waiter = select.poll()
    waiter.register(tty, select.POLLIN)
    waiter.poll()
elif mode == "select":
    ask("Select: ")
    select.select([tty], [], [])
elif mode == "epoll":
    ask("Epoll: ")
    waiter = select.epoll()
    waiter.register(tty, select.EPOLLIN)
    waiter.poll()
elif mode == "both":
    pipe, _ = os.pipe()
    ask("Both: ")
    select.select([tty, pipe], [], [])
    os.read(tty, 100)
    ask("Alone: ")
    select.select([tty], [], [])
else:
    ask("Read: ")
line = os.read(tty, 100).strip().decode()
os.write(tty, f"got {line}\\r\\n".encode())
`;

let readerPath = "";

function ttyTest(name: string, fn: (mcp: Connection) => Promise<void>, ignore = false): void {
  serverTest(name, async (mcp) => {
    const dir = tempDir("winterm-tty-");
    readerPath = `${dir}/reader.py`;
    Deno.writeTextFileSync(readerPath, READER);
    try {
      await fn(mcp);
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  }, { ignore: ignore || !linux || !has("python3") });
}

const create = async (mcp: Connection, command: string): Promise<string> =>
  (await mcp.callOk<{ terminalId: string }>("terminal_create", { command })).terminalId;

const waitInput = (mcp: Connection, terminalId: string, timeoutMs = 30_000): Promise<Waited> =>
  mcp.callOk<Waited>("terminal_wait", { terminalId, input: true, timeoutMs });

/**
 * The program asks: `input` answers with the prompt; the line typed is read (the program says
 * what it got) and the program exits.
 */
async function answers(
  mcp: Connection,
  command: string,
  prompt: string,
): Promise<void> {
  const terminalId = await create(mcp, command);
  const asked = await waitInput(mcp, terminalId);
  assertEquals([asked.condition, asked.output.endsWith(prompt)], ["input", true], command);
  const done = await mcp.callOk<Waited>("terminal_write", {
    terminalId,
    input: "s3cret",
    exit: true,
  });
  match(done.output, /got s3cret/, `${command}: ${JSON.stringify(done)}`);
  assertEquals(done.exitStatus?.exitCode, 0, command);
}

ttyTest(
  "a line typed while the echo is off is no echo: output that holds it is kept",
  async (mcp) => {
    const terminalId = await create(
      mcp,
      `bash --norc -c 'read -s -p "PIN: " pin; echo; echo "PIN $pin taken"'`,
    );
    assertEquals((await waitInput(mcp, terminalId)).condition, "input");
    const done = await mcp.callOk<Waited>("terminal_write", {
      terminalId,
      input: "1234",
      exit: true,
    });
    // It was taken for the echo of "1234", and the answer came back empty.
    assertEquals(done.output, "\nPIN 1234 taken\n");
  },
);

ttyTest("input: getpass, read < /dev/tty, poll, select and epoll on /dev/tty", async (mcp) => {
  await answers(
    mcp,
    `${PYTHON} -c "import getpass; print('got', getpass.getpass())"`,
    "Password: ",
  );
  await answers(
    mcp,
    `bash --norc -c 'read -s -p "Password: " x < /dev/tty; echo "got $x"'`,
    "Password: ",
  );
  for (const mode of ["read", "poll", "select", "epoll"]) {
    const prompt = `${mode[0].toUpperCase()}${mode.slice(1)}: `;
    await answers(mcp, `${PYTHON} ${readerPath} ${mode}`, prompt);
  }
});

ttyTest(
  "input: ssh's passphrase prompt (OpenSSH's readpassphrase reads /dev/tty)",
  async (mcp) => {
    const dir = tempDir("winterm-tty-key-");
    try {
      const key = `${dir}/key`;
      const made = new Deno.Command("ssh-keygen", {
        args: ["-q", "-t", "ed25519", "-N", "s3cret", "-C", "winterm", "-f", key],
      }).outputSync();
      ok(made.success, new TextDecoder().decode(made.stderr));
      const terminalId = await create(mcp, `ssh-keygen -y -f ${key}`);
      const asked = await waitInput(mcp, terminalId);
      assertEquals([asked.condition, asked.output], ["input", "Enter passphrase: "]);
      const done = await mcp.callOk<Waited>("terminal_write", {
        terminalId,
        input: "s3cret",
        exit: true,
      });
      match(done.output, /^\nssh-ed25519 \S+ winterm\n$/);
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
  !has("ssh-keygen"),
);

ttyTest("input: a reader of /dev/tty that is not its group's leader", async (mcp) => {
  // bash (the leader) waits for python, started in its group (no job control), which reads.
  await answers(
    mcp,
    `bash --norc -c '${PYTHON} -c "import getpass; print(\\"got\\", getpass.getpass())"; true'`,
    "Password: ",
  );
});

ttyTest(
  "input: the terminal under another name (a bind mount in a mount namespace of its own)",
  async (mcp) => {
    // unshare execs (no fork): the reader stays the terminal's foreground program. The mount
    // is private to that namespace, gone with it.
    const dir = tempDir("winterm-tty-name-");
    try {
      const other = `${dir}/other-name`;
      Deno.writeTextFileSync(other, "");
      await answers(
        mcp,
        `unshare -m sh -c 'mount --bind "$(tty)" ${other} && exec ${PYTHON} ${readerPath} ` +
          `read ${other}'`,
        "Read: ",
      );
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
  Deno.uid() !== 0 || !has("unshare"),
);

ttyTest("input: not while /dev/tty and a pipe are waited on; then, alone, yes", async (mcp) => {
  const terminalId = await create(mcp, `${PYTHON} ${readerPath} both`);
  const shown = await mcp.callOk<Waited>("terminal_wait", {
    terminalId,
    pattern: "Both: $",
    timeoutMs: 30_000,
  });
  assertEquals(shown.condition, "pattern");
  // It may be busy with the pipe: no answer of `input` (a slower machine only makes this pass
  // more easily, never fail).
  assertEquals((await waitInput(mcp, terminalId, 1500)).condition, "timeout");
  await mcp.callOk("terminal_write", { terminalId, input: "first" });
  const alone = await waitInput(mcp, terminalId);
  assertEquals([alone.condition, alone.output.endsWith("Alone: ")], ["input", true]);
});

ttyTest(
  "input: a program reading its own /dev/tty in a terminal inside ours is not our reader",
  async (mcp) => {
    // script relays between our terminal and one of its own, whose /dev/tty getpass reads.
    const terminalId = await create(
      mcp,
      `script -qec "${PYTHON} -c 'import getpass; getpass.getpass()'" /dev/null`,
    );
    const shown = await mcp.callOk<Waited>("terminal_wait", {
      terminalId,
      pattern: "Password: $",
      timeoutMs: 30_000,
    });
    assertEquals(shown.condition, "pattern");
    assertEquals((await waitInput(mcp, terminalId, 1500)).condition, "timeout");
    // Another terminal's reader is not this one's either.
    const reading = await create(mcp, `${PYTHON} ${readerPath} read`);
    assertEquals((await waitInput(mcp, reading)).condition, "input");
    const idle = await create(mcp, "sleep 30");
    assertEquals((await waitInput(mcp, idle, 1500)).condition, "timeout");
  },
  !has("script"),
);

ttyTest(
  "input: every answer holds the prompt printed before the read, beside load (50 rounds)",
  async (mcp) => {
    // A terminal that floods keeps the server's reads and a CPU busy.
    await create(mcp, "yes");
    for (let round = 0; round < 50; round++) {
      // From stdin, then from /dev/tty, by turns.
      const from = round % 2 ? " < /dev/tty" : "";
      const terminalId = await create(
        mcp,
        `bash --norc -c 'read -s -p "Password ${round}: " x${from}; echo "got $x"'`,
      );
      const asked = await waitInput(mcp, terminalId);
      assertEquals(
        [asked.condition, asked.output],
        ["input", `Password ${round}: `],
        `round ${round}`,
      );
      await mcp.callOk("terminal_release", { terminalId });
    }
    const getpass = await create(mcp, `${PYTHON} -c "import getpass; getpass.getpass()"`);
    ok((await waitInput(mcp, getpass)).output.endsWith("Password: "));
  },
);
