/**
 * Job objects: every child runs in one, so the whole tree it starts can be ended at once
 * (TerminateJobObject), and ends when the job's last handle closes (KILL_ON_JOB_CLOSE), even
 * if the server dies.
 *
 * The PTY's own, as posix/tree.ts is: a child's tree ends with it. It is also why supervision
 * has nothing to do on Windows (../supervision/windows.ts): the kernel closes the server's
 * handles however it dies, and every job with them.
 *
 * @module
 */
import { log } from "../../log.ts";
import { type Handle, kernel32, LAYOUT, W } from "./kernel32.ts";

/** A job that ends the whole tree when closed, holding `process`; null if it cannot be made. */
export function createJob(process: Handle): Handle {
  const k = kernel32();
  const job = k.CreateJobObjectW(null, null);
  if (job === null) {
    log.warn("CreateJobObjectW failed: kill will reach the child only", {
      error: k.GetLastError(),
    });
    return null;
  }
  const limits = new Uint8Array(LAYOUT.JOB_EXTENDED_LIMIT);
  new DataView(limits.buffer).setUint32(
    LAYOUT.JOB_LIMIT_FLAGS,
    W.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    true,
  );
  const ok =
    k.SetInformationJobObject(job, W.JobObjectExtendedLimitInformation, limits, limits.length) &&
    k.AssignProcessToJobObject(job, process);
  if (!ok) {
    log.warn("cannot put the child in a job object: kill will reach the child only", {
      error: k.GetLastError(),
    });
    k.CloseHandle(job);
    return null;
  }
  return job;
}
