//! Probes: the only code that touches the machine. Each runs on its own thread under a
//! deadline, concurrently with the others, and fills its part of the [`Snapshot`]. A probe that
//! times out or panics becomes a failed value and a line in `snapshot.probes`, never a crash.

pub mod breadcrumb;
pub mod cudalibs;
pub mod deadline;
pub mod driver;
pub mod env;
pub mod host;
pub mod install;
pub mod kernel_log;
pub mod ldcache;
pub mod libquery;
pub mod nvml;
pub mod nvml_health;
pub mod nvml_watch;
pub mod os;
pub mod pe;
pub mod python;
pub mod sacrificial;
pub mod tegra;
pub use crate::trace;
pub mod windows;

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::snapshot::{Cuda, Driver, LibCuda, ProbeRun, Probed, Snapshot, SNAPSHOT_SCHEMA};
use deadline::{Deadline, Outcome};

/// What the probes need to know; built from the command line and the process environment.
#[derive(Debug, Clone)]
pub struct ProbeOptions {
    /// The whole probe phase ends by this: the run's one deadline (from `--timeout`).
    pub deadline: Deadline,
    /// Run the Python import probe in each environment.
    pub deep: bool,
    /// `--python PATH` values.
    pub pythons: Vec<PathBuf>,
    /// File-system root ("/" except in tests).
    pub root: PathBuf,
    /// gpudoctor's own executable, re-run as the library helper.
    pub helper: Option<PathBuf>,
    /// Skip NVML (tests, or `--no-probe`).
    pub nvml: bool,
    /// The kernel log's look-back window in hours.
    pub log_window_hours: f64,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        ProbeOptions {
            deadline: Deadline::after(Duration::from_secs(10)),
            deep: false,
            pythons: Vec::new(),
            root: PathBuf::from("/"),
            helper: std::env::current_exe().ok(),
            nvml: true,
            log_window_hours: 24.0,
        }
    }
}

fn getenv(k: &str) -> Option<String> {
    std::env::var(k)
        .ok()
        .filter(|v| !v.is_empty() || k == "CUDA_VISIBLE_DEVICES")
}

/// (prefix, error) of each environment whose `--deep` import probe timed out.
fn envs_timed_out(snap: &Snapshot) -> Vec<(String, String)> {
    snap.python_envs()
        .iter()
        .filter_map(|e| match &e.deep {
            Some(p @ Probed::Failed { error, .. }) if p.code() == Some("timeout") => {
                Some((e.prefix.clone(), error.clone()))
            }
            _ => None,
        })
        .collect()
}

/// Probes the machine.
pub fn probe_all(opts: &ProbeOptions) -> Snapshot {
    trace::line("probes start");
    let deadline_at = opts.deadline;
    let mut snap = Snapshot::empty();
    snap.taken_at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .ok()
        .map(|d| d.as_secs());
    snap.env = env::probe(&getenv);
    let progress: nvml_health::Progress = std::sync::Arc::default();
    let started = start_probes(opts, deadline_at, &progress);
    let install_pending = started.install.is_some();
    snap.probes = collect_probes(&mut snap, started, deadline_at, &progress);
    if !install_pending {
        let version = snap
            .driver
            .nvml
            .get()
            .and_then(|n| n.driver_version.clone());
        snap.driver.install = windows::driver_install(version.as_deref());
    }
    snap.uptime_seconds = if cfg!(windows) {
        windows::uptime_seconds()
    } else {
        std::fs::read_to_string(opts.root.join("proc/uptime"))
            .ok()
            .and_then(|t| t.split_whitespace().next()?.parse().ok())
    };
    snap.schema = SNAPSHOT_SCHEMA.to_string();
    trace::line("probes done");
    snap
}

/// The probes running, each on its own thread, and the `--deep` imports' time limit.
struct Started {
    host: deadline::Pending<crate::snapshot::Host>,
    terms: deadline::Pending<OsTerms>,
    install: Option<deadline::Pending<Probed<crate::snapshot::DriverInstall>>>,
    files: deadline::Pending<Driver>,
    nvml: Option<deadline::Pending<Result<nvml::NvmlReport, sacrificial::HelperFailure>>>,
    klog: deadline::Pending<Probed<crate::snapshot::KernelLog>>,
    libcuda: deadline::Pending<Probed<LibCuda>>,
    software: deadline::Pending<(Vec<crate::snapshot::PythonEnv>, cudalibs::Found)>,
    deep: Option<Deadline>,
}

/// os-release, the package managers and Secure Boot.
type OsTerms = (
    Probed<crate::snapshot::OsRelease>,
    Probed<Vec<String>>,
    Probed<crate::snapshot::SecureBoot>,
);

/// Starts every probe on its own thread, in the order they are waited for.
fn start_probes(
    opts: &ProbeOptions,
    deadline_at: Deadline,
    progress: &nvml_health::Progress,
) -> Started {
    let root = opts.root.clone();
    let host = deadline::spawn("host", move || {
        if cfg!(windows) {
            windows::host(&getenv)
        } else {
            host::probe(&root, &getenv)
        }
    });
    let terms = start_os_probe(opts);
    let install = start_install_probe(opts);

    let root = opts.root.clone();
    let files = deadline::spawn("driver-files", move || {
        if cfg!(windows) {
            windows::driver_files(&root)
        } else {
            linux_driver_files(&root)
        }
    });

    let nvml = opts.nvml.then(|| {
        let (p, deep, helper) = (progress.clone(), opts.deep, opts.helper.clone());
        deadline::spawn("nvml", move || nvml_probe(helper, deep, deadline_at, p))
    });

    let root = opts.root.clone();
    let window = opts.log_window_hours;
    let klog = deadline::spawn("kernel-log", move || {
        if cfg!(windows) {
            windows::event_log(window, deadline_at)
        } else {
            kernel_log::probe(&root, window, deadline_at)
        }
    });

    let helper = opts.helper.clone();
    let until = deadline_at.min(Duration::from_secs(5));
    let libcuda = deadline::spawn("libcuda", move || libcuda(helper, until));

    let py_src = python_sources(opts);
    let lib_src = library_sources(opts);
    let deep = opts
        .deep
        .then(|| deadline_at.less(Duration::from_millis(500)));
    let software = deadline::spawn("software", move || {
        let mut envs = python::probe(&py_src, None);
        // The imports run while the libraries are probed: a slow import costs its own time only.
        let imports = deep.map(|until| python::spawn_deep(&envs, until));
        let libs = cudalibs::probe(&lib_src, &envs, deadline_at);
        if let Some(running) = imports {
            python::join_deep(&mut envs, running);
        }
        (envs, libs)
    });
    Started {
        host,
        terms,
        install,
        files,
        nvml,
        klog,
        libcuda,
        software,
        deep,
    }
}

/// os-release, the package managers on PATH and Secure Boot.
fn start_os_probe(opts: &ProbeOptions) -> deadline::Pending<OsTerms> {
    let root = opts.root.clone();
    // A command run by a probe gets at most 3 s, and never past the deadline.
    let per_call = opts.deadline.min(Duration::from_secs(3)).remaining();
    deadline::spawn("os", move || {
        let path = getenv("PATH");
        if cfg!(windows) {
            (
                windows::os_release(),
                os::package_managers(path.as_deref(), true, getenv("PATHEXT").as_deref()),
                windows::secure_boot(),
            )
        } else {
            (
                os::os_release(&root),
                os::package_managers(path.as_deref(), false, None),
                os::secure_boot(&root, path.as_deref(), per_call),
            )
        }
    })
}

/// How the driver was installed (not on Windows, where it is read after NVML).
fn start_install_probe(
    opts: &ProbeOptions,
) -> Option<deadline::Pending<Probed<crate::snapshot::DriverInstall>>> {
    let root = opts.root.clone();
    // A command run by a probe gets at most 3 s, and never past the deadline.
    let per_call = opts.deadline.min(Duration::from_secs(3)).remaining();
    (!cfg!(windows)).then(|| {
        deadline::spawn("driver-install", move || {
            let kernel = std::fs::read_to_string(root.join("proc/sys/kernel/osrelease"))
                .ok()
                .map(|k| k.trim().to_string())
                .filter(|k| !k.is_empty() && !k.contains('/') && !k.contains(".."));
            let run = install::path_runner(getenv("PATH"), per_call);
            install::probe(
                &root,
                kernel.as_deref(),
                driver::kernel_module(&root).get().cloned(),
                &run,
            )
        })
    })
}

/// Where Python environments are looked for.
fn python_sources(opts: &ProbeOptions) -> python::Sources {
    python::Sources {
        given: opts.pythons.clone(),
        own_exe: std::env::current_exe().ok(),
        path_var: getenv("PATH"),
        virtual_env: getenv("VIRTUAL_ENV"),
        conda_prefix: getenv("CONDA_PREFIX"),
        pyenv_root: getenv("PYENV_ROOT"),
        pyenv_version: getenv("PYENV_VERSION"),
        home: getenv("HOME"),
        windows: cfg!(windows),
        pathext: getenv("PATHEXT"),
        local_app_data: getenv("LOCALAPPDATA"),
        app_data: getenv("APPDATA"),
        user_profile: getenv("USERPROFILE"),
        program_files: getenv("ProgramFiles"),
    }
}

/// Where CUDA runtimes, cuDNN, libcuda and toolkits are looked for.
fn library_sources(opts: &ProbeOptions) -> cudalibs::Sources {
    let windows = cfg!(windows);
    cudalibs::Sources {
        ld_library_path: getenv("LD_LIBRARY_PATH").filter(|_| !windows),
        cuda_home: ["CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"]
            .iter()
            .filter_map(|k| getenv(k))
            .chain(cuda_path_versions())
            .collect(),
        conda_prefix: getenv("CONDA_PREFIX"),
        path_var: getenv("PATH"),
        ld_cache: (!windows).then(|| opts.root.join("etc/ld.so.cache")),
        toolkit_roots: if windows {
            Vec::new()
        } else {
            toolkit_roots(&opts.root)
        },
        helper: opts.helper.clone(),
        windows,
        program_files: getenv("ProgramFiles").map(PathBuf::from),
    }
}

/// Waits for each probe (up to the deadline) and puts what it found, or why not, in the
/// snapshot; each probe's run, with where NVML was stuck or how it crashed.
fn collect_probes(
    snap: &mut Snapshot,
    p: Started,
    deadline_at: Deadline,
    progress: &nvml_health::Progress,
) -> Vec<ProbeRun> {
    let mut runs = Vec::new();
    let mut record = |name: &str, took: Duration, outcome: &str| {
        runs.push(ProbeRun {
            name: name.to_string(),
            millis: took.as_millis() as u64,
            outcome: outcome.to_string(),
            stuck_in: None,
            detail: None,
        })
    };

    match p.host.wait(deadline_at) {
        (Outcome::Done(h), t) => {
            snap.host = Probed::found(h);
            record("host", t, "ok");
        }
        (o, t) => {
            snap.host = lost(&o, "host");
            record("host", t, outcome_name(&o));
        }
    }
    match p.files.wait(deadline_at) {
        (Outcome::Done(d), t) => {
            snap.driver = d;
            record("driver-files", t, "ok");
        }
        (o, t) => {
            snap.driver.kernel_module = lost(&o, "driver files");
            record("driver-files", t, outcome_name(&o));
        }
    }
    match p.install.map(|p| p.wait(deadline_at)) {
        Some((Outcome::Done(i), t)) => {
            snap.driver.install = i;
            record("driver-install", t, "ok");
        }
        Some((o, t)) => {
            snap.driver.install = lost(&o, "the driver's installation");
            record("driver-install", t, outcome_name(&o));
        }
        None => {}
    }
    match p.terms.wait(deadline_at) {
        (Outcome::Done((os_release, managers, secure_boot)), t) => {
            snap.os_release = os_release;
            snap.package_managers = managers;
            snap.secure_boot = secure_boot;
            record("os", t, "ok");
        }
        (o, t) => {
            snap.os_release = lost(&o, "os-release");
            snap.package_managers = lost(&o, "package managers");
            snap.secure_boot = lost(&o, "Secure Boot");
            record("os", t, outcome_name(&o));
        }
    }
    let nvml = p.nvml.map(|p| p.wait(deadline_at));
    let (nvml_stuck, nvml_crash) = record_nvml(snap, nvml, progress, &mut record);
    match p.klog.wait(deadline_at) {
        (Outcome::Done(k), t) => {
            snap.kernel_log = k;
            record("kernel-log", t, "ok");
        }
        (o, t) => {
            snap.kernel_log = lost(&o, "the kernel log");
            record("kernel-log", t, outcome_name(&o));
        }
    }
    match p.libcuda.wait(deadline_at) {
        (Outcome::Done(l), t) => {
            snap.driver.libcuda = l;
            record("libcuda", t, "ok");
        }
        (o, t) => {
            snap.driver.libcuda = lost(&o, "libcuda");
            record("libcuda", t, outcome_name(&o));
        }
    }
    let software = p.software.wait(deadline_at);
    let software_ok = matches!(software.0, Outcome::Done(_));
    record_software(snap, software, &mut record);
    if software_ok {
        runs.extend(deep_import_runs(snap, p.deep));
    }
    if let Some(r) = runs.iter_mut().find(|r: &&mut ProbeRun| r.name == "nvml") {
        r.stuck_in = nvml_stuck;
        r.detail = nvml_crash;
    }
    runs
}

/// An import that missed its deadline is a probe that timed out (probe.timeout).
fn deep_import_runs(snap: &Snapshot, deep: Option<Deadline>) -> Vec<ProbeRun> {
    envs_timed_out(snap)
        .into_iter()
        .map(|e| ProbeRun {
            name: format!("deep import in {}", e.0),
            millis: deep.map_or(0, |d| d.budget().as_millis() as u64),
            outcome: "timeout".to_string(),
            stuck_in: None,
            detail: Some(e.1),
        })
        .collect()
}

/// NVML's outcome in the snapshot: its facts, or why it gave none (timed out, and where;
/// crashed, and how; skipped). Where it was stuck, and how it crashed, for its probe run.
fn record_nvml(
    snap: &mut Snapshot,
    nvml: Option<(
        Outcome<Result<nvml::NvmlReport, sacrificial::HelperFailure>>,
        Duration,
    )>,
    progress: &nvml_health::Progress,
    record: &mut impl FnMut(&str, Duration, &str),
) -> (Option<String>, Option<String>) {
    let mut nvml_stuck: Option<String> = None;
    let mut nvml_crash: Option<String> = None;
    match nvml {
        Some((Outcome::Done(Ok(r)), t)) => {
            snap.driver.nvml = r.info;
            snap.gpus = r.gpus;
            record("nvml", t, "ok");
        }
        Some((Outcome::Done(Err(f)), t)) if f.timed_out => {
            let what = match &f.at {
                Some(at) => format!("NVML (stuck in {at})"),
                None => "NVML".to_string(),
            };
            snap.driver.nvml = lost(&Outcome::<()>::TimedOut, &what);
            snap.gpus = lost(&Outcome::<()>::TimedOut, &what);
            record("nvml", t, "timeout");
            nvml_stuck = f.at;
        }
        Some((Outcome::Done(Err(f)), t)) => {
            let why = f.describe(&format!("the NVML probe ({NVML_LIB})"));
            snap.driver.nvml = Probed::failed_code("crashed", why.clone());
            snap.gpus = Probed::failed_code("crashed", format!("no GPU list: {why}"));
            record("nvml", t, "crash");
            nvml_stuck = f.at;
            nvml_crash = Some(why);
        }
        Some((o, t)) => {
            let stuck = progress.lock().map(|g| g.clone()).unwrap_or_default();
            let what = if stuck.is_empty() {
                "NVML".to_string()
            } else {
                format!("NVML (stuck in {stuck})")
            };
            snap.driver.nvml = lost(&o, &what);
            snap.gpus = lost(&o, &what);
            record("nvml", t, outcome_name(&o));
            nvml_stuck = (!stuck.is_empty()).then_some(stuck);
        }
        None => {
            snap.driver.nvml = Probed::absent_code("skipped", "NVML was not probed");
            snap.gpus = Probed::absent_code("skipped", "NVML was not probed");
        }
    }
    (nvml_stuck, nvml_crash)
}

/// The Python environments and the CUDA libraries in the snapshot, or why not.
fn record_software(
    snap: &mut Snapshot,
    software: (
        Outcome<(Vec<crate::snapshot::PythonEnv>, cudalibs::Found)>,
        Duration,
    ),
    record: &mut impl FnMut(&str, Duration, &str),
) {
    match software {
        (Outcome::Done((envs, libs)), t) => {
            snap.python = Probed::found(envs);
            snap.cuda = Cuda {
                runtimes: Probed::found(libs.runtimes),
                toolkits: Probed::found(libs.toolkits),
                assumed_version: None,
            };
            snap.cudnn = Probed::found(libs.cudnn);
            snap.driver.libcuda_files = Probed::found(libs.libcuda_files);
            record("software", t, "ok");
        }
        (o, t) => {
            snap.python = lost(&o, "Python environments");
            snap.cuda.runtimes = lost(&o, "CUDA libraries");
            snap.cuda.toolkits = lost(&o, "CUDA toolkits");
            snap.cudnn = lost(&o, "cuDNN libraries");
            record("software", t, outcome_name(&o));
        }
    }
}

/// The driver as Linux's file system shows it (`/proc`, `/sys`, `/dev`, the daemons).
fn linux_driver_files(root: &std::path::Path) -> Driver {
    Driver {
        kernel_module: driver::kernel_module(root),
        sys_module_version: driver::sys_module_version(root),
        nouveau_loaded: driver::nouveau_loaded(root),
        pci_devices: driver::pci_devices(root),
        device_nodes: driver::device_nodes(root),
        daemons: driver::daemons(root),
        ..Default::default()
    }
}

/// NVML's library, as the probe names it.
pub const NVML_LIB: &str = if cfg!(windows) {
    "nvml.dll"
} else {
    "libnvidia-ml.so.1"
};

/// NVML in a sacrificial `gpudoctor __probe-nvml`, killed just before the deadline so that the
/// call it hung in is known; in this process only when there is no executable to re-run.
fn nvml_probe(
    helper: Option<PathBuf>,
    deep: bool,
    until: Deadline,
    progress: nvml_health::Progress,
) -> Result<nvml::NvmlReport, sacrificial::HelperFailure> {
    let Some(h) = helper else {
        return Ok(nvml::probe(progress, deep));
    };
    // Killed a little before the probe's deadline so that its breadcrumb (where it hung) is read
    // in time; ending a process and reading its pipes takes longer on Windows (under Wine, 100 ms
    // was not enough: the main thread's deadline came first and where NVML hung was lost).
    let margin = Duration::from_millis(if cfg!(windows) { 400 } else { 100 });
    let limit = until.less(margin).remaining();
    let args: &[&str] = if deep {
        &["__probe-nvml", "--deep"]
    } else {
        &["__probe-nvml"]
    };
    sacrificial::run(&h, args, None, limit)
}

fn outcome_name<T>(o: &Outcome<T>) -> &'static str {
    match o {
        Outcome::Done(_) => "ok",
        Outcome::TimedOut => "timeout",
        Outcome::Panicked(_) => "panic",
    }
}

fn lost<T, U>(o: &Outcome<U>, what: &str) -> Probed<T> {
    match o {
        Outcome::TimedOut => Probed::failed_code(
            "timeout",
            format!("probing {what} did not finish before the deadline (--timeout)"),
        ),
        Outcome::Panicked(m) => Probed::failed_code(
            "panic",
            format!(
                "probing {what} failed internally: {}",
                crate::sanitize::clean_line(m, 300)
            ),
        ),
        Outcome::Done(_) => Probed::failed("internal: unexpected outcome"),
    }
}

/// The values of Windows' `CUDA_PATH_V12_4`-style variables (one per installed toolkit), sorted.
fn cuda_path_versions() -> Vec<String> {
    let mut v: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(k, val)| {
            let k = k.into_string().ok()?;
            let val = val.into_string().ok()?;
            (k.to_ascii_uppercase().starts_with("CUDA_PATH_V") && !val.is_empty())
                .then_some((k, val))
        })
        .collect();
    v.sort();
    v.into_iter().map(|(_, val)| val).collect()
}

/// /usr/local/cuda, /usr/local/cuda-*, /opt/cuda under `root`.
fn toolkit_roots(root: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let local = root.join("usr/local");
    if let Ok(rd) = std::fs::read_dir(&local) {
        let mut names: Vec<String> = rd
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n == "cuda" || n.starts_with("cuda-"))
            .collect();
        names.sort();
        out.extend(names.into_iter().map(|n| local.join(n)));
    }
    out.push(root.join("opt/cuda"));
    out
}

/// `libcuda.so.1` as the loader resolves it, through the library helper.
fn libcuda(helper: Option<PathBuf>, until: Deadline) -> Probed<LibCuda> {
    let Some(h) = helper else {
        return Probed::absent("no helper executable to load libcuda with");
    };
    let name = if cfg!(windows) {
        "nvcuda.dll"
    } else {
        "libcuda.so.1"
    };
    match libquery::query(&h, libquery::LibKind::Driver, name, until.remaining()) {
        Ok(a) => {
            if let Some(e) = a.error {
                if a.path.is_none() && a.value.is_none() {
                    return Probed::absent_code(
                        "not_found",
                        format!("{name} could not be loaded: {e}"),
                    );
                }
            }
            let file_version = a.path.as_deref().and_then(|p| {
                let path = std::path::Path::new(p);
                if cfg!(windows) {
                    // nvcuda.dll's version resource: 32.0.15.6094 is driver 560.94.
                    return pe::file_version(path).and_then(|v| pe::driver_version_of(&v));
                }
                let f = path.file_name()?.to_string_lossy().into_owned();
                let v = f.strip_prefix("libcuda.so.")?;
                crate::version::DriverVersion::parse(v).map(|_| v.to_string())
            });
            Probed::found(LibCuda {
                path: a.path,
                file_version,
                cuda_driver_version: a.value.map(|v| v as i32),
                error: a.status.map(cu_result_name),
            })
        }
        Err(e) => Probed::failed(e),
    }
}

/// The name of a CUresult `cuDriverGetVersion` returned, from the codes mined from cuda.h
/// ([`crate::knowledge::codes`]).
fn cu_result_name(code: i64) -> String {
    match crate::knowledge::codes::cuda(code) {
        (_, Some(c)) | (Some(c), None) => format!("{} ({code})", c.name),
        (None, None) => format!("CUresult {code}"),
    }
}
