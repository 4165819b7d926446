// A minimal WASI (preview 1) shim made only of web APIs, enough for a Go
// wasip1 reactor: the same code runs in browsers and in Node, so one path is
// tested everywhere (node:wasi is deliberately not used).
//
// The Go runtime needs only a handful of these to start and run; the values
// that matter are fd_prestat_get → EBADF (no preopened directories, or the
// runtime loops over them) and poll_oneoff → 0 (or the scheduler panics).
// Anything else the module imports gets ENOSYS.

const ESUCCESS = 0;
const EBADF = 8;
const EINVAL = 28;
const ENOSYS = 52;

/** Thrown by proc_exit: the module asked to stop. The instance is unusable after it. */
export class WasiExit extends Error {
  constructor(code) {
    super(`wasm module exited with code ${code}`);
    this.name = 'WasiExit';
    this.code = code;
  }
}

export class Wasi {
  /**
   * @param {{stdout?: (line: string) => void, stderr?: (line: string) => void}} [opts]
   */
  constructor(opts = {}) {
    this.memory = null;
    this.setOutput(opts);
    this.decoder = new TextDecoder();
  }

  /** Where the module's stdout and stderr lines go from now on (an instance reused by another Core). */
  setOutput(opts = {}) {
    this.out = { 1: opts.stdout ?? ((s) => console.log(s)), 2: opts.stderr ?? ((s) => console.error(s)) };
    this.pending = { 1: '', 2: '' };
  }

  /** Binds the shim to the instance's exported memory (after instantiation). */
  setMemory(memory) {
    this.memory = memory;
  }

  // Views are made per call: memory.grow detaches the previous buffer.
  dv() {
    return new DataView(this.memory.buffer);
  }

  u8() {
    return new Uint8Array(this.memory.buffer);
  }

  /** The import object for a module: every wasi import it declares gets a function. */
  imports(module) {
    const impl = this.functions();
    const ns = {};
    for (const imp of WebAssembly.Module.imports(module)) {
      if (imp.kind !== 'function') continue;
      if (imp.module !== 'wasi_snapshot_preview1' && imp.module !== 'wasi_unstable') continue;
      ns[imp.name] = impl[imp.name] ?? (() => ENOSYS);
    }
    return { wasi_snapshot_preview1: ns, wasi_unstable: ns };
  }

  functions() {
    return {
      args_sizes_get: (argcPtr, bufSizePtr) => {
        const dv = this.dv();
        dv.setUint32(argcPtr, 0, true);
        dv.setUint32(bufSizePtr, 0, true);
        return ESUCCESS;
      },
      args_get: () => ESUCCESS,
      environ_sizes_get: (countPtr, bufSizePtr) => {
        const dv = this.dv();
        dv.setUint32(countPtr, 0, true);
        dv.setUint32(bufSizePtr, 0, true);
        return ESUCCESS;
      },
      environ_get: () => ESUCCESS,
      clock_res_get: (id, resPtr) => {
        this.dv().setBigUint64(resPtr, 1000n, true);
        return ESUCCESS;
      },
      clock_time_get: (id, precision, timePtr) => {
        // 0: realtime; 1, 2, 3: monotonic / process / thread CPU time.
        let ns;
        if (id === 0) {
          ns = BigInt(Date.now()) * 1000000n;
        } else {
          ns = BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6));
        }
        this.dv().setBigUint64(timePtr, ns, true);
        return ESUCCESS;
      },
      random_get: (ptr, len) => {
        // getRandomValues fills at most 65536 bytes per call.
        const mem = this.u8();
        for (let off = 0; off < len; off += 65536) {
          crypto.getRandomValues(mem.subarray(ptr + off, ptr + Math.min(len, off + 65536)));
        }
        return ESUCCESS;
      },
      fd_write: (fd, iovs, iovsLen, nwrittenPtr) => {
        if (fd !== 1 && fd !== 2) return EBADF;
        const dv = this.dv();
        const mem = this.u8();
        let written = 0;
        for (let i = 0; i < iovsLen; i++) {
          const ptr = dv.getUint32(iovs + i * 8, true);
          const len = dv.getUint32(iovs + i * 8 + 4, true);
          this.write(fd, mem.subarray(ptr, ptr + len));
          written += len;
        }
        dv.setUint32(nwrittenPtr, written, true);
        return ESUCCESS;
      },
      fd_read: (fd, iovs, iovsLen, nreadPtr) => {
        if (fd !== 0) return EBADF;
        this.dv().setUint32(nreadPtr, 0, true); // stdin is always at EOF
        return ESUCCESS;
      },
      fd_close: (fd) => (fd <= 2 ? ESUCCESS : EBADF),
      fd_fdstat_get: (fd, statPtr) => {
        if (fd > 2) return EBADF;
        const dv = this.dv();
        dv.setUint8(statPtr, 2); // character device
        dv.setUint16(statPtr + 2, 0, true); // flags
        dv.setBigUint64(statPtr + 8, 0xffffffffn, true); // rights base
        dv.setBigUint64(statPtr + 16, 0xffffffffn, true); // rights inheriting
        return ESUCCESS;
      },
      fd_fdstat_set_flags: (fd) => (fd <= 2 ? ESUCCESS : EBADF),
      fd_prestat_get: () => EBADF,
      fd_prestat_dir_name: () => EBADF,
      fd_seek: () => EBADF,
      poll_oneoff: (inPtr, outPtr, nsubs, neventsPtr) => {
        // Nothing can block here: report every subscription as ready at
        // once (a clock subscription then reads as an expired timer).
        const dv = this.dv();
        if (nsubs === 0) return EINVAL;
        for (let i = 0; i < nsubs; i++) {
          const sub = inPtr + i * 48;
          const ev = outPtr + i * 32;
          dv.setBigUint64(ev, dv.getBigUint64(sub, true), true); // userdata
          dv.setUint16(ev + 8, 0, true); // error
          dv.setUint8(ev + 10, dv.getUint8(sub + 8)); // type
          dv.setBigUint64(ev + 16, 0n, true); // fd_readwrite.nbytes
          dv.setUint16(ev + 24, 0, true); // fd_readwrite.flags
        }
        dv.setUint32(neventsPtr, nsubs, true);
        return ESUCCESS;
      },
      sched_yield: () => ESUCCESS,
      proc_exit: (code) => {
        throw new WasiExit(code);
      },
    };
  }

  // Line-buffered so that a panic trace prints as whole lines.
  write(fd, bytes) {
    const text = this.pending[fd] + this.decoder.decode(bytes, { stream: true });
    const lines = text.split('\n');
    this.pending[fd] = lines.pop();
    for (const line of lines) this.out[fd](line);
  }
}
