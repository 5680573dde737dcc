//! An interpreter of the PTX subset gpudoctor's own kernels use (`src/gpu/smoke.ptx`,
//! `src/gpu/stress.ptx`), bit for bit, for tests only: it is a dev-dependency and never part of
//! the shipped binary.
//!
//! Semantics follow the PTX ISA (NVIDIA, "Parallel Thread Execution ISA", version 7.0 and
//! later), by instruction:
//! - integer `add`/`sub`/`mul.lo`/`mad.lo` wrap modulo 2^n; `mul.wide.u32` gives the full
//!   64-bit product ("Integer Arithmetic Instructions");
//! - `shl`/`shr` clamp shift amounts above the register width to the width, so they give 0
//!   (`shr.s` gives the sign) ("Logic and Shift Instructions");
//! - `add`/`sub`/`mul.rn.f32` are IEEE 754 binary32 operations rounded to nearest even;
//!   `fma.rn.f32` computes `a * b + c` in infinite precision, rounded once ("Floating Point
//!   Instructions: fma");
//! - `cvt.rn.f32.u32` rounds to nearest even; `cvt.u32.u64` truncates; `cvt.u64.u32` zero-extends;
//! - `setp` on `.f32` with `eq lt le gt ge ne` is false when either operand is NaN (the ordered
//!   comparisons; the unordered ones end in `u`);
//! - `ld`/`st`/`atom` need naturally aligned addresses, a vector access its whole size
//!   ("Vectors": alignment); a misaligned access is an error here, as it is on a GPU
//!   (CUDA_ERROR_MISALIGNED_ADDRESS, 716);
//! - integer division by zero gives an unspecified, machine-specific value in PTX (`div`): an
//!   error here, so a kernel that could divide by zero fails its test.
//!
//! Threads are run one after another, each to its end. That is exact for kernels without
//! barriers or shared memory whose threads touch disjoint words except through atomics, which
//! is every kernel of ours; a kernel using anything outside the subset fails to load, so a new
//! instruction in our PTX fails the tests until the interpreter learns it.

use std::collections::HashMap;

/// An error: a PTX text outside the subset, or a fault while running (bad address, misaligned
/// access, division by zero, a thread that never ends).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(pub String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

fn err<T>(msg: impl Into<String>) -> Result<T, Error> {
    Err(Error(msg.into()))
}

/// Global memory as the kernels see it: byte addresses in the device's address space.
pub trait Memory {
    fn read(&mut self, addr: u64, out: &mut [u8]) -> Result<(), Error>;
    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), Error>;
}

/// A sparse memory of 4 KiB pages, every byte zero until written: kernels can be run over
/// addresses far apart (word indices above 2^33) without allocating what lies between.
#[derive(Debug, Default, Clone)]
pub struct SparseMemory {
    pages: HashMap<u64, Box<[u8; 4096]>>,
}

impl SparseMemory {
    pub fn new() -> SparseMemory {
        SparseMemory::default()
    }
    /// Pages written so far.
    pub fn pages(&self) -> usize {
        self.pages.len()
    }
    pub fn read_u32(&mut self, addr: u64) -> u32 {
        let mut b = [0u8; 4];
        let _ = self.read(addr, &mut b);
        u32::from_le_bytes(b)
    }
    pub fn write_u32(&mut self, addr: u64, v: u32) {
        let _ = self.write(addr, &v.to_le_bytes());
    }
    pub fn read_u64(&mut self, addr: u64) -> u64 {
        let mut b = [0u8; 8];
        let _ = self.read(addr, &mut b);
        u64::from_le_bytes(b)
    }
}

impl Memory for SparseMemory {
    fn read(&mut self, addr: u64, out: &mut [u8]) -> Result<(), Error> {
        let off = (addr & 4095) as usize;
        if off + out.len() <= 4096 {
            match self.pages.get(&(addr >> 12)) {
                Some(p) => out.copy_from_slice(p.get(off..off + out.len()).unwrap_or(&[])),
                None => out.fill(0),
            }
            return Ok(());
        }
        for (k, o) in out.iter_mut().enumerate() {
            let a = addr.wrapping_add(k as u64);
            *o = self
                .pages
                .get(&(a >> 12))
                .and_then(|p| p.get((a & 4095) as usize).copied())
                .unwrap_or(0);
        }
        Ok(())
    }
    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), Error> {
        let off = (addr & 4095) as usize;
        if off + data.len() <= 4096 {
            let page = self
                .pages
                .entry(addr >> 12)
                .or_insert_with(|| Box::new([0u8; 4096]));
            if let Some(dst) = page.get_mut(off..off + data.len()) {
                dst.copy_from_slice(data);
            }
            return Ok(());
        }
        for (k, d) in data.iter().enumerate() {
            let a = addr.wrapping_add(k as u64);
            let page = self
                .pages
                .entry(a >> 12)
                .or_insert_with(|| Box::new([0u8; 4096]));
            if let Some(b) = page.get_mut((a & 4095) as usize) {
                *b = *d;
            }
        }
        Ok(())
    }
}

/// Scalar types of the subset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    U32,
    S32,
    U64,
    S64,
    F32,
    Pred,
}

impl Ty {
    fn parse(s: &str) -> Option<Ty> {
        Some(match s {
            "u32" | "b32" => Ty::U32,
            "s32" => Ty::S32,
            "u64" | "b64" => Ty::U64,
            "s64" => Ty::S64,
            "f32" => Ty::F32,
            "pred" => Ty::Pred,
            _ => return None,
        })
    }
    fn bytes(self) -> usize {
        match self {
            Ty::U64 | Ty::S64 => 8,
            _ => 4,
        }
    }
    fn mask(self) -> u64 {
        if self.bytes() == 8 {
            u64::MAX
        } else {
            0xFFFF_FFFF
        }
    }
}

/// Special registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Special {
    Tid(usize),
    Ntid(usize),
    Ctaid(usize),
    Nctaid(usize),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Src {
    Reg(usize),
    Imm(u64),
    Special(Special),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Base {
    Reg(usize),
    Param(usize),
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Addr {
    base: Base,
    off: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bin {
    Add,
    Sub,
    MulLo,
    MulWide,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    Div,
    Rem,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Space {
    Param,
    Global,
}

#[derive(Debug, Clone, PartialEq)]
enum Op {
    Bin {
        k: Bin,
        ty: Ty,
        d: usize,
        a: Src,
        b: Src,
    },
    MadLo {
        ty: Ty,
        d: usize,
        a: Src,
        b: Src,
        c: Src,
    },
    Fma {
        d: usize,
        a: Src,
        b: Src,
        c: Src,
    },
    Mov {
        ty: Ty,
        d: usize,
        a: Src,
    },
    Abs {
        d: usize,
        a: Src,
    },
    Cvt {
        to: Ty,
        from: Ty,
        d: usize,
        a: Src,
    },
    Setp {
        cmp: Cmp,
        ty: Ty,
        d: usize,
        a: Src,
        b: Src,
    },
    Selp {
        ty: Ty,
        d: usize,
        a: Src,
        b: Src,
        p: Src,
    },
    Ld {
        space: Space,
        ty: Ty,
        d: Vec<usize>,
        addr: Addr,
    },
    St {
        ty: Ty,
        s: Vec<Src>,
        addr: Addr,
    },
    AtomAdd {
        ty: Ty,
        d: usize,
        addr: Addr,
        b: Src,
    },
    Bra(usize),
    Ret,
}

#[derive(Debug, Clone, PartialEq)]
struct Instr {
    guard: Option<(usize, bool)>,
    op: Op,
    line: usize,
}

/// One `.entry` of a module.
#[derive(Debug, Clone)]
pub struct Kernel {
    pub name: String,
    /// The parameters' types in order (`.u64`, `.u32`, `.f32`).
    params: Vec<Ty>,
    regs: usize,
    code: Vec<Instr>,
}

impl Kernel {
    /// How many parameters the kernel declares.
    pub fn param_count(&self) -> usize {
        self.params.len()
    }
    /// The parameters' sizes in bytes, in order (what `cuLaunchKernel` reads of each).
    pub fn param_sizes(&self) -> Vec<usize> {
        self.params.iter().map(|t| t.bytes()).collect()
    }
}

/// A parsed module: its `.target` and its kernels.
#[derive(Debug, Clone)]
pub struct Module {
    pub version: String,
    pub target: String,
    pub kernels: HashMap<String, Kernel>,
}

impl Module {
    pub fn kernel(&self, name: &str) -> Result<&Kernel, Error> {
        self.kernels
            .get(name)
            .ok_or_else(|| Error(format!("no kernel named {name}")))
    }
}

/// Where one thread is in the grid (1-D and 3-D launches alike; y and z of 1-D are 0 / 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadId {
    pub tid: [u32; 3],
    pub ntid: [u32; 3],
    pub ctaid: [u32; 3],
    pub nctaid: [u32; 3],
}

impl ThreadId {
    /// Thread `gid` (global index) of a 1-D launch of `grid` blocks of `block` threads.
    pub fn linear(gid: u64, grid: u32, block: u32) -> ThreadId {
        let block = block.max(1);
        ThreadId {
            tid: [(gid % u64::from(block)) as u32, 0, 0],
            ntid: [block, 1, 1],
            ctaid: [(gid / u64::from(block)) as u32, 0, 0],
            nctaid: [grid, 1, 1],
        }
    }
}

/// Counters of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    pub threads: u64,
    pub instructions: u64,
}

/// Most instructions one thread may execute before it is called hung.
pub const DEFAULT_STEP_LIMIT: u64 = 1 << 32;

/// Parses a PTX module of the subset.
pub fn parse(src: &str) -> Result<Module, Error> {
    let mut version = String::new();
    let mut target = String::new();
    let mut kernels = HashMap::new();
    let lines: Vec<(usize, String)> = src
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.split("//").next().unwrap_or("").trim().to_string()))
        .filter(|(_, l)| !l.is_empty())
        .collect();
    let mut i = 0;
    while let Some((ln, l)) = lines.get(i) {
        if let Some(v) = l.strip_prefix(".version") {
            version = v.trim().to_string();
        } else if let Some(t) = l.strip_prefix(".target") {
            target = t.trim().to_string();
        } else if l.starts_with(".address_size") {
            if l.split_whitespace().nth(1) != Some("64") {
                return err(format!("line {ln}: only .address_size 64 is supported"));
            }
        } else if l.contains(".entry") {
            let (k, next) = parse_entry(&lines, i)?;
            kernels.insert(k.name.clone(), k);
            i = next;
            continue;
        } else {
            return err(format!("line {ln}: unsupported directive: {l}"));
        }
        i += 1;
    }
    Ok(Module {
        version,
        target,
        kernels,
    })
}

struct Regs {
    names: HashMap<String, (usize, Ty)>,
}

impl Regs {
    fn get(&self, name: &str, ln: usize) -> Result<usize, Error> {
        self.names
            .get(name)
            .map(|(i, _)| *i)
            .ok_or_else(|| Error(format!("line {ln}: undeclared register {name}")))
    }
}

fn parse_entry(lines: &[(usize, String)], start: usize) -> Result<(Kernel, usize), Error> {
    let (ln0, head) = lines
        .get(start)
        .ok_or_else(|| Error("an .entry past the end".into()))?;
    let name = head
        .split(".entry")
        .nth(1)
        .and_then(|s| s.split('(').next())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| Error(format!("line {ln0}: an .entry without a name")))?;
    let mut params: Vec<Ty> = Vec::new();
    let mut param_names: HashMap<String, usize> = HashMap::new();
    let mut i = start + 1;
    // Parameters, up to ")".
    loop {
        let (ln, l) = lines
            .get(i)
            .ok_or_else(|| Error(format!("{name}: unterminated parameter list")))?;
        i += 1;
        if l.starts_with(')') {
            break;
        }
        let w: Vec<&str> = l.trim_end_matches(',').split_whitespace().collect();
        match w.as_slice() {
            [".param", ty, pname] => {
                let t = ty
                    .strip_prefix('.')
                    .and_then(Ty::parse)
                    .ok_or_else(|| Error(format!("line {ln}: parameter type {ty}")))?;
                param_names.insert((*pname).to_string(), params.len());
                params.push(t);
            }
            _ => return err(format!("line {ln}: not a parameter: {l}")),
        }
    }
    match lines.get(i) {
        Some((_, l)) if l == "{" => i += 1,
        Some((ln, l)) => return err(format!("line {ln}: expected '{{', found {l}")),
        None => return err(format!("{name}: no body")),
    }
    // Register declarations, then instructions and labels, up to "}".
    let mut regs = Regs {
        names: HashMap::new(),
    };
    let mut body: Vec<(usize, String)> = Vec::new();
    let mut labels: HashMap<String, usize> = HashMap::new();
    loop {
        let (ln, l) = lines
            .get(i)
            .ok_or_else(|| Error(format!("{name}: unterminated body")))?;
        i += 1;
        if l == "}" {
            break;
        }
        if let Some(decl) = l.strip_prefix(".reg") {
            let w: Vec<&str> = decl
                .trim()
                .trim_end_matches(';')
                .split_whitespace()
                .collect();
            let (Some(ty), Some(r)) = (w.first(), w.get(1)) else {
                return err(format!("line {ln}: bad .reg: {l}"));
            };
            let t = ty
                .strip_prefix('.')
                .and_then(Ty::parse)
                .ok_or_else(|| Error(format!("line {ln}: register type {ty}")))?;
            if let Some((base, n)) = r.split_once('<') {
                let n: usize = n
                    .trim_end_matches('>')
                    .parse()
                    .map_err(|_| Error(format!("line {ln}: bad register count in {r}")))?;
                for k in 0..n {
                    let id = regs.names.len();
                    regs.names.insert(format!("{base}{k}"), (id, t));
                }
            } else {
                let id = regs.names.len();
                regs.names.insert((*r).to_string(), (id, t));
            }
            continue;
        }
        if let Some(label) = l.strip_suffix(':') {
            labels.insert(label.trim().to_string(), body.len());
            continue;
        }
        body.push((*ln, l.clone()));
    }
    let mut code = Vec::with_capacity(body.len());
    for (ln, l) in &body {
        code.push(parse_instr(*ln, l, &regs, &param_names, &labels)?);
    }
    Ok((
        Kernel {
            name,
            params,
            regs: regs.names.len(),
            code,
        },
        i,
    ))
}

/// Splits operands at top-level commas (not inside `{}` or `[]`).
fn split_operands(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for ch in s.chars() {
        match ch {
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            _ => {}
        }
        if ch == ',' && depth == 0 {
            out.push(cur.trim().to_string());
            cur.clear();
        } else {
            cur.push(ch);
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

fn parse_src(s: &str, regs: &Regs, ln: usize) -> Result<Src, Error> {
    let s = s.trim();
    if let Some(sp) = s.strip_prefix('%') {
        let special = |kind: &str| -> Option<Special> {
            let (reg, dim) = kind.split_once('.')?;
            let d = match dim {
                "x" => 0,
                "y" => 1,
                "z" => 2,
                _ => return None,
            };
            Some(match reg {
                "tid" => Special::Tid(d),
                "ntid" => Special::Ntid(d),
                "ctaid" => Special::Ctaid(d),
                "nctaid" => Special::Nctaid(d),
                _ => return None,
            })
        };
        if let Some(x) = special(sp) {
            return Ok(Src::Special(x));
        }
        return Ok(Src::Reg(regs.get(s, ln)?));
    }
    if let Some(hex) = s.strip_prefix("0f").or_else(|| s.strip_prefix("0F")) {
        return u32::from_str_radix(hex, 16)
            .map(|b| Src::Imm(u64::from(b)))
            .map_err(|_| Error(format!("line {ln}: bad float literal {s}")));
    }
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16)
            .map(Src::Imm)
            .map_err(|_| Error(format!("line {ln}: bad literal {s}")));
    }
    s.parse::<i64>()
        .map(|v| Src::Imm(v as u64))
        .map_err(|_| Error(format!("line {ln}: bad operand {s}")))
}

fn parse_dst(s: &str, regs: &Regs, ln: usize) -> Result<usize, Error> {
    regs.get(s.trim(), ln)
}

fn parse_addr(
    s: &str,
    regs: &Regs,
    params: &HashMap<String, usize>,
    ln: usize,
) -> Result<Addr, Error> {
    let inner = s
        .trim()
        .strip_prefix('[')
        .and_then(|x| x.strip_suffix(']'))
        .ok_or_else(|| Error(format!("line {ln}: not an address: {s}")))?;
    let (base, off) = match inner.split_once('+') {
        Some((b, o)) => (
            b.trim(),
            o.trim()
                .parse::<i64>()
                .map_err(|_| Error(format!("line {ln}: bad offset in {s}")))?,
        ),
        None => (inner.trim(), 0),
    };
    let base = if base.starts_with('%') {
        Base::Reg(regs.get(base, ln)?)
    } else {
        Base::Param(
            *params
                .get(base)
                .ok_or_else(|| Error(format!("line {ln}: unknown parameter {base}")))?,
        )
    };
    Ok(Addr { base, off })
}

fn parse_instr(
    ln: usize,
    l: &str,
    regs: &Regs,
    params: &HashMap<String, usize>,
    labels: &HashMap<String, usize>,
) -> Result<Instr, Error> {
    let l = l
        .strip_suffix(';')
        .ok_or_else(|| Error(format!("line {ln}: no ';': {l}")))?
        .trim();
    let (guard, rest) = if let Some(g) = l.strip_prefix('@') {
        let (p, rest) = g
            .split_once(char::is_whitespace)
            .ok_or_else(|| Error(format!("line {ln}: a guard without an instruction")))?;
        let (neg, p) = match p.strip_prefix('!') {
            Some(p) => (true, p),
            None => (false, p),
        };
        (Some((regs.get(p, ln)?, neg)), rest.trim())
    } else {
        (None, l)
    };
    let (opcode, ops) = match rest.split_once(char::is_whitespace) {
        Some((o, r)) => (o, split_operands(r)),
        None => (rest, Vec::new()),
    };
    let parts: Vec<&str> = opcode.split('.').collect();
    let bad = || Error(format!("line {ln}: unsupported instruction: {rest}"));
    let opn = |k: usize| ops.get(k).map(String::as_str).ok_or_else(bad);
    let ty_last = || parts.last().and_then(|t| Ty::parse(t)).ok_or_else(bad);
    let src = |k: usize| -> Result<Src, Error> { parse_src(opn(k)?, regs, ln) };
    let dst = |k: usize| -> Result<usize, Error> { parse_dst(opn(k)?, regs, ln) };
    let base = parts.first().copied().unwrap_or("");
    let mods: Vec<&str> = parts.iter().skip(1).copied().collect();
    let op = match base {
        "add" | "sub" | "mul" | "and" | "or" | "xor" | "shl" | "shr" | "div" | "rem" => {
            let ty = ty_last()?;
            if ty == Ty::F32 {
                // add/sub/mul .rn.f32: round to nearest even (no other rounding is supported).
                if !mods.contains(&"rn") {
                    return Err(bad());
                }
                let k = match base {
                    "add" => Bin::Add,
                    "sub" => Bin::Sub,
                    "mul" => Bin::MulLo,
                    _ => return Err(bad()),
                };
                Op::Bin {
                    k,
                    ty,
                    d: dst(0)?,
                    a: src(1)?,
                    b: src(2)?,
                }
            } else {
                let k = match (base, mods.first().copied()) {
                    ("add", _) => Bin::Add,
                    ("sub", _) => Bin::Sub,
                    ("mul", Some("lo")) => Bin::MulLo,
                    ("mul", Some("wide")) => Bin::MulWide,
                    ("and", _) => Bin::And,
                    ("or", _) => Bin::Or,
                    ("xor", _) => Bin::Xor,
                    ("shl", _) => Bin::Shl,
                    ("shr", _) => Bin::Shr,
                    ("div", _) => Bin::Div,
                    ("rem", _) => Bin::Rem,
                    _ => return Err(bad()),
                };
                if k == Bin::MulWide && ty.bytes() != 4 {
                    return Err(bad());
                }
                Op::Bin {
                    k,
                    ty,
                    d: dst(0)?,
                    a: src(1)?,
                    b: src(2)?,
                }
            }
        }
        "mad" if mods.first() == Some(&"lo") => Op::MadLo {
            ty: ty_last()?,
            d: dst(0)?,
            a: src(1)?,
            b: src(2)?,
            c: src(3)?,
        },
        "fma" if mods == ["rn", "f32"] => Op::Fma {
            d: dst(0)?,
            a: src(1)?,
            b: src(2)?,
            c: src(3)?,
        },
        "mov" => Op::Mov {
            ty: ty_last()?,
            d: dst(0)?,
            a: src(1)?,
        },
        "abs" if mods == ["f32"] => Op::Abs {
            d: dst(0)?,
            a: src(1)?,
        },
        "cvt" => {
            // cvt[.rn].dst.src; a float destination from an integer needs .rn.
            let n = parts.len();
            let (Some(to), Some(from)) = (
                parts.get(n.wrapping_sub(2)).and_then(|t| Ty::parse(t)),
                parts.get(n.wrapping_sub(1)).and_then(|t| Ty::parse(t)),
            ) else {
                return Err(bad());
            };
            if to == Ty::F32 && (from == Ty::F32 || !mods.contains(&"rn")) {
                return Err(bad());
            }
            if from == Ty::F32 {
                return Err(bad());
            }
            Op::Cvt {
                to,
                from,
                d: dst(0)?,
                a: src(1)?,
            }
        }
        "setp" => {
            let cmp = match mods.first().copied() {
                Some("eq") => Cmp::Eq,
                Some("ne") => Cmp::Ne,
                Some("lt") => Cmp::Lt,
                Some("le") => Cmp::Le,
                Some("gt") => Cmp::Gt,
                Some("ge") => Cmp::Ge,
                _ => return Err(bad()),
            };
            Op::Setp {
                cmp,
                ty: ty_last()?,
                d: dst(0)?,
                a: src(1)?,
                b: src(2)?,
            }
        }
        "selp" => Op::Selp {
            ty: ty_last()?,
            d: dst(0)?,
            a: src(1)?,
            b: src(2)?,
            p: src(3)?,
        },
        "ld" => {
            let space = match mods.first().copied() {
                Some("param") => Space::Param,
                Some("global") => Space::Global,
                _ => return Err(bad()),
            };
            let vec4 = mods.contains(&"v4");
            let d = if vec4 {
                let list = opn(0)?
                    .trim()
                    .strip_prefix('{')
                    .and_then(|x| x.strip_suffix('}'))
                    .ok_or_else(bad)?
                    .split(',')
                    .map(|r| parse_dst(r, regs, ln))
                    .collect::<Result<Vec<usize>, Error>>()?;
                if list.len() != 4 {
                    return Err(bad());
                }
                list
            } else {
                vec![dst(0)?]
            };
            let addr = parse_addr(opn(1)?, regs, params, ln)?;
            if space == Space::Param && (vec4 || !matches!(addr.base, Base::Param(_))) {
                return Err(bad());
            }
            Op::Ld {
                space,
                ty: ty_last()?,
                d,
                addr,
            }
        }
        "st" if mods.first() == Some(&"global") => {
            let s = if mods.contains(&"v4") {
                let list = opn(1)?
                    .trim()
                    .strip_prefix('{')
                    .and_then(|x| x.strip_suffix('}'))
                    .ok_or_else(bad)?
                    .split(',')
                    .map(|r| parse_src(r, regs, ln))
                    .collect::<Result<Vec<Src>, Error>>()?;
                if list.len() != 4 {
                    return Err(bad());
                }
                list
            } else {
                vec![src(1)?]
            };
            Op::St {
                ty: ty_last()?,
                s,
                addr: parse_addr(opn(0)?, regs, params, ln)?,
            }
        }
        "atom" if mods.first() == Some(&"global") && mods.get(1) == Some(&"add") => {
            let ty = ty_last()?;
            if ty == Ty::F32 {
                return Err(bad());
            }
            Op::AtomAdd {
                ty,
                d: dst(0)?,
                addr: parse_addr(opn(1)?, regs, params, ln)?,
                b: src(2)?,
            }
        }
        "bra" => {
            let l = opn(0)?.trim();
            Op::Bra(
                *labels
                    .get(l)
                    .ok_or_else(|| Error(format!("line {ln}: no label {l}")))?,
            )
        }
        "ret" => Op::Ret,
        _ => return Err(bad()),
    };
    Ok(Instr {
        guard,
        op,
        line: ln,
    })
}

static FAULTY_FMA: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes `fma.rn.f32` compute `a * b + c` with two roundings from now on: a GPU whose FMA units
/// compute wrong (a stand-in driver's fault on demand).
pub fn set_faulty_fma(on: bool) {
    FAULTY_FMA.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// `a * b + c` rounded once: the CPU's own FMA instruction where there is one (x86_64 FMA3),
/// else the C library's `fmaf` (correct in glibc). The interpreter does not use gpudoctor's
/// software `fmaf`, so a mistake there shows as a mismatch between kernel and host twin.
pub fn fma_f32(a: f32, b: f32, c: f32) -> f32 {
    if FAULTY_FMA.load(std::sync::atomic::Ordering::Relaxed) {
        return a * b + c;
    }
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU has FMA3 (checked just above).
            return unsafe { hw_fma(a, b, c) };
        }
    }
    a.mul_add(b, c)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
unsafe fn hw_fma(a: f32, b: f32, c: f32) -> f32 {
    use std::arch::x86_64::{_mm_cvtss_f32, _mm_fmadd_ss, _mm_set_ss};
    _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(a), _mm_set_ss(b), _mm_set_ss(c)))
}

fn f(v: u64) -> f32 {
    f32::from_bits(v as u32)
}

fn fb(x: f32) -> u64 {
    u64::from(x.to_bits())
}

struct Thread<'a> {
    k: &'a Kernel,
    id: ThreadId,
    params: &'a [u64],
    regs: Vec<u64>,
}

impl Thread<'_> {
    fn val(&self, s: Src) -> u64 {
        match s {
            Src::Reg(r) => self.regs.get(r).copied().unwrap_or(0),
            Src::Imm(v) => v,
            Src::Special(sp) => u64::from(match sp {
                Special::Tid(d) => self.id.tid.get(d).copied().unwrap_or(0),
                Special::Ntid(d) => self.id.ntid.get(d).copied().unwrap_or(1),
                Special::Ctaid(d) => self.id.ctaid.get(d).copied().unwrap_or(0),
                Special::Nctaid(d) => self.id.nctaid.get(d).copied().unwrap_or(1),
            }),
        }
    }
    fn set(&mut self, d: usize, v: u64) {
        if let Some(r) = self.regs.get_mut(d) {
            *r = v;
        }
    }
    fn addr(&self, a: Addr) -> u64 {
        match a.base {
            Base::Reg(r) => self.regs.get(r).copied().unwrap_or(0),
            Base::Param(_) => 0,
        }
        .wrapping_add(a.off as u64)
    }
    fn param(&self, a: Addr, ty: Ty) -> Result<u64, Error> {
        let Base::Param(i) = a.base else {
            return err("ld.param from a register address");
        };
        if a.off != 0 {
            return err("ld.param with an offset");
        }
        let declared = self.k.params.get(i).copied();
        if declared.map(Ty::bytes) != Some(ty.bytes()) {
            return err(format!(
                "ld.param of {} bytes from a parameter of {:?}",
                ty.bytes(),
                declared
            ));
        }
        Ok(self.params.get(i).copied().unwrap_or(0) & ty.mask())
    }
}

fn aligned(addr: u64, n: usize, line: usize) -> Result<(), Error> {
    if !addr.is_multiple_of(n as u64) {
        return err(format!(
            "line {line}: misaligned address {addr:#x} for a {n}-byte access (CUDA_ERROR_MISALIGNED_ADDRESS)"
        ));
    }
    Ok(())
}

fn bin(k: Bin, ty: Ty, a: u64, b: u64, line: usize) -> Result<u64, Error> {
    let m = ty.mask();
    let bits = (ty.bytes() * 8) as u64;
    if ty == Ty::F32 {
        let (x, y) = (f(a), f(b));
        return Ok(fb(match k {
            Bin::Add => x + y,
            Bin::Sub => x - y,
            Bin::MulLo => x * y,
            _ => return err(format!("line {line}: no such f32 operation")),
        }));
    }
    let (a, b) = (a & m, b & m);
    let signed = matches!(ty, Ty::S32 | Ty::S64);
    let sx = |v: u64| -> i64 {
        if bits == 32 {
            i64::from(v as u32 as i32)
        } else {
            v as i64
        }
    };
    Ok(match k {
        Bin::Add => a.wrapping_add(b) & m,
        Bin::Sub => a.wrapping_sub(b) & m,
        Bin::MulLo => a.wrapping_mul(b) & m,
        Bin::MulWide => {
            if signed {
                (sx(a).wrapping_mul(sx(b))) as u64
            } else {
                a.wrapping_mul(b)
            }
        }
        Bin::And => a & b,
        Bin::Or => a | b,
        Bin::Xor => a ^ b,
        // Shift amounts are unsigned 32-bit; above the width they clamp to it.
        Bin::Shl => {
            let s = b & 0xFFFF_FFFF;
            if s >= bits {
                0
            } else {
                (a << s) & m
            }
        }
        Bin::Shr => {
            let s = (b & 0xFFFF_FFFF).min(bits);
            if signed {
                let v = sx(a);
                (if s >= bits { v >> (bits - 1) } else { v >> s }) as u64 & m
            } else if s >= bits {
                0
            } else {
                a >> s
            }
        }
        Bin::Div | Bin::Rem => {
            if b == 0 {
                return err(format!(
                    "line {line}: integer division by zero (unspecified in PTX)"
                ));
            }
            if signed {
                let (x, y) = (sx(a), sx(b));
                (if k == Bin::Div {
                    x.wrapping_div(y)
                } else {
                    x.wrapping_rem(y)
                }) as u64
                    & m
            } else if k == Bin::Div {
                a / b
            } else {
                a % b
            }
        }
    })
}

fn compare(cmp: Cmp, ty: Ty, a: u64, b: u64) -> bool {
    use std::cmp::Ordering as O;
    let ord = match ty {
        Ty::F32 => f(a).partial_cmp(&f(b)),
        Ty::S32 => Some((a as u32 as i32).cmp(&(b as u32 as i32))),
        Ty::S64 => Some((a as i64).cmp(&(b as i64))),
        _ => Some((a & ty.mask()).cmp(&(b & ty.mask()))),
    };
    match (cmp, ord) {
        // Ordered comparisons: false with a NaN (setp.ne.f32 too; `neu` would be true).
        (_, None) => false,
        (Cmp::Eq, Some(o)) => o == O::Equal,
        (Cmp::Ne, Some(o)) => o != O::Equal,
        (Cmp::Lt, Some(o)) => o == O::Less,
        (Cmp::Le, Some(o)) => o != O::Greater,
        (Cmp::Gt, Some(o)) => o == O::Greater,
        (Cmp::Ge, Some(o)) => o != O::Less,
    }
}

/// Runs one thread of `k` to its end; `params` holds each parameter's value (the low bytes of
/// a 4-byte parameter).
pub fn run_thread(
    k: &Kernel,
    id: ThreadId,
    params: &[u64],
    mem: &mut dyn Memory,
    step_limit: u64,
) -> Result<u64, Error> {
    if params.len() != k.params.len() {
        return err(format!(
            "{} takes {} parameters, given {}",
            k.name,
            k.params.len(),
            params.len()
        ));
    }
    let mut t = Thread {
        k,
        id,
        params,
        regs: vec![0; k.regs],
    };
    let mut pc = 0usize;
    let mut steps = 0u64;
    loop {
        let Some(ins) = k.code.get(pc) else {
            return Ok(steps); // falling off the end is a return
        };
        steps += 1;
        if steps > step_limit {
            return err(format!(
                "{}: a thread ran past {step_limit} instructions (hung)",
                k.name
            ));
        }
        pc += 1;
        if let Some((p, neg)) = ins.guard {
            let on = t.regs.get(p).copied().unwrap_or(0) != 0;
            if on == neg {
                continue;
            }
        }
        match &ins.op {
            Op::Bin { k: op, ty, d, a, b } => {
                let v = bin(*op, *ty, t.val(*a), t.val(*b), ins.line)?;
                t.set(*d, v);
            }
            Op::MadLo { ty, d, a, b, c } => {
                let m = ty.mask();
                let v = t.val(*a).wrapping_mul(t.val(*b)).wrapping_add(t.val(*c)) & m;
                t.set(*d, v);
            }
            Op::Fma { d, a, b, c } => {
                let v = fma_f32(f(t.val(*a)), f(t.val(*b)), f(t.val(*c)));
                t.set(*d, fb(v));
            }
            Op::Mov { ty, d, a } => {
                let v = t.val(*a) & ty.mask();
                t.set(*d, v);
            }
            Op::Abs { d, a } => {
                let v = t.val(*a) & 0x7FFF_FFFF;
                t.set(*d, v);
            }
            Op::Cvt { to, from, d, a } => {
                let x = t.val(*a) & from.mask();
                let v = match (to, from) {
                    (Ty::F32, Ty::U32) => fb(x as u32 as f32),
                    (Ty::F32, Ty::S32) => fb(x as u32 as i32 as f32),
                    (Ty::F32, Ty::U64) => fb(x as f32),
                    (Ty::F32, Ty::S64) => fb(x as i64 as f32),
                    (Ty::U64 | Ty::S64, Ty::S32) => x as u32 as i32 as i64 as u64,
                    (to, _) => x & to.mask(),
                };
                t.set(*d, v);
            }
            Op::Setp { cmp, ty, d, a, b } => {
                let v = compare(*cmp, *ty, t.val(*a), t.val(*b));
                t.set(*d, u64::from(v));
            }
            Op::Selp { ty, d, a, b, p } => {
                let v = if t.val(*p) != 0 { t.val(*a) } else { t.val(*b) } & ty.mask();
                t.set(*d, v);
            }
            Op::Ld { space, ty, d, addr } => match space {
                Space::Param => {
                    let v = t.param(*addr, *ty)?;
                    if let Some(r) = d.first() {
                        t.set(*r, v);
                    }
                }
                Space::Global => {
                    let n = ty.bytes();
                    let at = t.addr(*addr);
                    aligned(at, n * d.len(), ins.line)?;
                    let mut buf = vec![0u8; n * d.len()];
                    mem.read(at, &mut buf)?;
                    for (r, chunk) in d.iter().zip(buf.chunks_exact(n)) {
                        let mut w = [0u8; 8];
                        w[..n].copy_from_slice(chunk);
                        t.set(*r, u64::from_le_bytes(w));
                    }
                }
            },
            Op::St { ty, s, addr } => {
                let n = ty.bytes();
                let at = t.addr(*addr);
                aligned(at, n * s.len(), ins.line)?;
                let mut buf = Vec::with_capacity(n * s.len());
                for x in s {
                    buf.extend_from_slice(&t.val(*x).to_le_bytes()[..n]);
                }
                mem.write(at, &buf)?;
            }
            Op::AtomAdd { ty, d, addr, b } => {
                let n = ty.bytes();
                let at = t.addr(*addr);
                aligned(at, n, ins.line)?;
                let mut w = [0u8; 8];
                mem.read(at, &mut w[..n])?;
                let old = u64::from_le_bytes(w);
                let new = old.wrapping_add(t.val(*b)) & ty.mask();
                mem.write(at, &new.to_le_bytes()[..n])?;
                t.set(*d, old);
            }
            Op::Bra(target) => pc = *target,
            Op::Ret => return Ok(steps),
        }
    }
}

/// Runs every thread of a 1-D launch (`grid` blocks of `block` threads), in order.
pub fn launch(
    k: &Kernel,
    grid: u32,
    block: u32,
    params: &[u64],
    mem: &mut dyn Memory,
) -> Result<Stats, Error> {
    let total = u64::from(grid.max(1)) * u64::from(block.max(1));
    launch_threads(k, grid, block, 0..total, params, mem)
}

/// Runs only the threads `gids` (global indexes) of a 1-D launch: for kernels whose threads
/// are independent (all of ours), what those threads do is what they would do in the full
/// launch, so a huge grid can be sampled.
pub fn launch_threads(
    k: &Kernel,
    grid: u32,
    block: u32,
    gids: impl IntoIterator<Item = u64>,
    params: &[u64],
    mem: &mut dyn Memory,
) -> Result<Stats, Error> {
    let mut stats = Stats::default();
    let total = u64::from(grid.max(1)) * u64::from(block.max(1));
    for gid in gids {
        if gid >= total {
            return err(format!("thread {gid} is outside the grid of {total}"));
        }
        let id = ThreadId::linear(gid, grid.max(1), block.max(1));
        stats.instructions += run_thread(k, id, params, mem, DEFAULT_STEP_LIMIT)?;
        stats.threads += 1;
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ADD: &str = "
.version 7.0
.target sm_50
.address_size 64
.visible .entry k(
	.param .u64 k_param_0,
	.param .u32 k_param_1
)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<4>;
	.reg .b64 	%rd<4>;
	ld.param.u64 	%rd1, [k_param_0];
	ld.param.u32 	%r1, [k_param_1];
	mov.u32 	%r2, %tid.x;
	setp.ge.u32 	%p1, %r2, %r1;
	@%p1 bra 	DONE;
	mul.wide.u32 	%rd2, %r2, 4;
	add.s64 	%rd3, %rd1, %rd2;
	shl.b32 	%r3, %r2, 33;
	add.s32 	%r3, %r3, %r2;
	st.global.u32 	[%rd3], %r3;
DONE:
	ret;
}
";

    #[test]
    fn runs_a_small_kernel() {
        let m = parse(ADD).unwrap();
        assert_eq!(m.target, "sm_50");
        let k = m.kernel("k").unwrap();
        let mut mem = SparseMemory::new();
        launch(k, 1, 8, &[0x1000, 5], &mut mem).unwrap();
        for i in 0..8u64 {
            // shl by 33 clamps to 0; the store happens only for tid < 5.
            let want = if i < 5 { i as u32 } else { 0 };
            assert_eq!(mem.read_u32(0x1000 + 4 * i), want);
        }
    }

    #[test]
    fn rejects_what_it_does_not_know() {
        let e = parse(&ADD.replace("add.s32", "addc.s32")).unwrap_err();
        assert!(e.0.contains("unsupported instruction"), "{e}");
        let e = parse(&ADD.replace("%r3, %r3, %r2", "%r3, %r3, %r9")).unwrap_err();
        assert!(e.0.contains("undeclared register %r9"), "{e}");
    }

    #[test]
    fn misaligned_and_runaway_threads_fail() {
        let m = parse(ADD).unwrap();
        let k = m.kernel("k").unwrap();
        let mut mem = SparseMemory::new();
        let e = launch(k, 1, 2, &[0x1002, 5], &mut mem).unwrap_err();
        assert!(e.0.contains("misaligned"), "{e}");
        let looping = ADD.replace("@%p1 bra \tDONE;", "LOOP:\n\tbra.uni \tLOOP;");
        let m = parse(&looping).unwrap();
        let e = run_thread(
            m.kernel("k").unwrap(),
            ThreadId::linear(0, 1, 1),
            &[0, 1],
            &mut mem,
            1000,
        )
        .unwrap_err();
        assert!(e.0.contains("hung"), "{e}");
    }

    #[test]
    fn float_rules() {
        assert!(!compare(Cmp::Le, Ty::F32, fb(f32::NAN), fb(1.0)));
        assert!(!compare(Cmp::Ne, Ty::F32, fb(f32::NAN), fb(1.0)));
        assert!(compare(Cmp::Le, Ty::F32, fb(-0.0), fb(0.0)));
        // fma is fused: 0.1f * 10 - 1 keeps the product's rounding error.
        assert_eq!(fma_f32(0.1, 10.0, -1.0).to_bits(), 0x3280_0000);
    }
}
