//! The FUSE file system: a root folder with `swap` (the device's first `--size` bytes) and `control`
//! (write `start` to begin the measured window, `stop` to end it and write the report).

use std::ffi::OsStr;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use fuser::{
    BsdFileFlags, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation,
    INodeNo, KernelConfig, LockOwner, OpenFlags, ReplyAttr, ReplyData, ReplyDirectory, ReplyEmpty,
    ReplyEntry, ReplyOpen, ReplyWrite, Request, TimeOrNow, WriteFlags,
};

use crate::clock::{Pending, Reply};
use crate::engine::{Engine, Op};

const ROOT: u64 = 1;
const SWAP: u64 = 2;
const CONTROL: u64 = 3;
const TTL: Duration = Duration::from_secs(3600);
/// The largest request the kernel sends (the FUSE limit is 256 pages): swap's largest writes pass whole.
const MAX_WRITE: u32 = 1 << 20;

/// What the daemon's main thread keeps after the session ends: the engine and the report.
pub struct Shared {
    pub engine: Mutex<Engine>,
    report_path: String,
    stopped: Mutex<bool>,
}

impl Shared {
    pub fn new(engine: Engine, report_path: String) -> Shared {
        Shared {
            engine: Mutex::new(engine),
            report_path,
            stopped: Mutex::new(false),
        }
    }

    /// Write the report of the measured window (atomically: a temporary file renamed into place).
    pub fn write_report(&self) -> std::io::Result<()> {
        let mut eng = self.engine.lock().expect("engine lock");
        let v = eng.report().map_err(std::io::Error::other)?;
        let tmp = format!("{}.tmp", self.report_path);
        std::fs::write(&tmp, serde_json::to_string_pretty(&v)? + "\n")?;
        std::fs::rename(tmp, &self.report_path)?;
        *self.stopped.lock().expect("stopped lock") = true;
        Ok(())
    }

    pub fn stopped(&self) -> bool {
        *self.stopped.lock().expect("stopped lock")
    }
}

pub struct LiveFs {
    shared: Arc<Shared>,
    tx: Mutex<Sender<Pending>>,
    seq: Mutex<u64>,
    size: u64,
}

impl LiveFs {
    pub fn new(shared: Arc<Shared>, tx: Sender<Pending>, size: u64) -> LiveFs {
        LiveFs {
            shared,
            tx: Mutex::new(tx),
            seq: Mutex::new(0),
            size,
        }
    }

    fn attr(&self, ino: u64) -> Option<FileAttr> {
        let (kind, size, perm) = match ino {
            ROOT => (FileType::Directory, 0, 0o755),
            SWAP => (FileType::RegularFile, self.size, 0o600),
            CONTROL => (FileType::RegularFile, 0, 0o600),
            _ => return None,
        };
        let t = SystemTime::UNIX_EPOCH;
        Some(FileAttr {
            ino: INodeNo(ino),
            size,
            blocks: size.div_ceil(512),
            atime: t,
            mtime: t,
            ctime: t,
            crtime: t,
            kind,
            perm,
            nlink: if kind == FileType::Directory { 2 } else { 1 },
            uid: 0,
            gid: 0,
            rdev: 0,
            blksize: 4096,
            flags: 0,
        })
    }

    fn later(&self, due: std::time::Instant, reply: Reply) {
        let seq = {
            let mut s = self.seq.lock().expect("seq lock");
            *s += 1;
            *s
        };
        let p = Pending { due, seq, reply };
        if let Err(e) = self.tx.lock().expect("tx lock").send(p) {
            e.0.reply.send(); // the responder is gone (shutting down): answer now
        }
    }

    fn control(&self, word: &str) -> Result<(), String> {
        match word.trim() {
            "start" => self
                .shared
                .engine
                .lock()
                .expect("engine lock")
                .start()
                .map_err(|e| e.to_string()),
            "stop" => self.shared.write_report().map_err(|e| e.to_string()),
            other => Err(format!("unknown control word `{other}` (start, stop)")),
        }
    }
}

impl Filesystem for LiveFs {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> std::io::Result<()> {
        if let Err(nearest) = config.set_max_write(MAX_WRITE) {
            let _ = config.set_max_write(nearest);
        }
        Ok(())
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let ino = match (parent.0, name.to_str()) {
            (ROOT, Some("swap")) => SWAP,
            (ROOT, Some("control")) => CONTROL,
            _ => return reply.error(Errno::ENOENT),
        };
        match self.attr(ino) {
            Some(a) => reply.entry(&TTL, &a, Generation(0)),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.attr(ino.0) {
            Some(a) => reply.attr(&TTL, &a),
            None => reply.error(Errno::ENOENT),
        }
    }

    /// Sizes are fixed: a truncate (`open(O_TRUNC)` of `control`) is accepted and changes nothing.
    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        _size: Option<u64>,
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        match self.attr(ino.0) {
            Some(a) => reply.attr(&TTL, &a),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        if ino.0 != SWAP && ino.0 != CONTROL {
            return reply.error(Errno::EISDIR);
        }
        // No page cache in FUSE: every read and write of the file reaches the daemon.
        reply.opened(FileHandle(0), FopenFlags::FOPEN_DIRECT_IO);
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock: Option<LockOwner>,
        reply: ReplyData,
    ) {
        if ino.0 != SWAP || offset >= self.size {
            return reply.data(&[]);
        }
        let len = u64::from(size).min(self.size - offset);
        let mut eng = self.shared.engine.lock().expect("engine lock");
        let data = eng.store.read(offset, len as usize);
        match eng.serve(Op::Read, offset, len) {
            Ok(due) => {
                drop(eng);
                self.later(due, Reply::Data(reply, data));
            }
            Err(e) => {
                eng.refused(&e);
                reply.error(Errno::EIO);
            }
        }
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _wflags: WriteFlags,
        _flags: OpenFlags,
        _lock: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        if ino.0 == CONTROL {
            return match self.control(&String::from_utf8_lossy(data)) {
                Ok(()) => reply.written(data.len() as u32),
                Err(msg) => {
                    eprintln!("nandstack-live: {msg}");
                    reply.error(Errno::EINVAL)
                }
            };
        }
        let end = offset.saturating_add(data.len() as u64);
        if ino.0 != SWAP || end > self.size {
            return reply.error(Errno::ENOSPC);
        }
        let mut eng = self.shared.engine.lock().expect("engine lock");
        match eng.serve(Op::Write, offset, data.len() as u64) {
            Ok(due) => {
                eng.store.write(offset, data);
                drop(eng);
                self.later(due, Reply::Written(reply, data.len() as u32));
            }
            Err(e) => {
                eng.refused(&e);
                reply.error(Errno::EIO);
            }
        }
    }

    fn flush(&self, _r: &Request, _i: INodeNo, _fh: FileHandle, _l: LockOwner, reply: ReplyEmpty) {
        reply.ok();
    }

    fn fsync(&self, _r: &Request, ino: INodeNo, _fh: FileHandle, _d: bool, reply: ReplyEmpty) {
        if ino.0 != SWAP {
            return reply.ok();
        }
        let mut eng = self.shared.engine.lock().expect("engine lock");
        match eng.serve(Op::Flush, 0, 0) {
            Ok(due) => {
                drop(eng);
                self.later(due, Reply::Done(reply));
            }
            Err(e) => {
                eng.refused(&e);
                reply.error(Errno::EIO);
            }
        }
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        if ino.0 != ROOT {
            return reply.error(Errno::ENOTDIR);
        }
        let entries = [
            (ROOT, FileType::Directory, "."),
            (ROOT, FileType::Directory, ".."),
            (SWAP, FileType::RegularFile, "swap"),
            (CONTROL, FileType::RegularFile, "control"),
        ];
        for (i, (ino, kind, name)) in entries.iter().enumerate().skip(offset as usize) {
            if reply.add(INodeNo(*ino), (i + 1) as u64, *kind, name) {
                break;
            }
        }
        reply.ok();
    }
}
