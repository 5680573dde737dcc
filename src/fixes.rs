//! Fixes in the machine's own terms (issue 31): the driver and Python install commands come from
//! data (`fixes/driver.yaml`, `fixes/python.yaml`, embedded at build time), filled in for the
//! family of the machine (os-release ID / ID_LIKE), the way its driver was installed, the
//! Python environment's tool, with concrete values (`nvidia-driver-580`, never `<branch>`).
//! Rules ask for an action; they never carry a package manager's command themselves.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::snapshot::{PythonEnv, Snapshot};
use crate::vocab::Fix;

pub const DRIVER_YAML: &str = include_str!("../fixes/driver.yaml");
pub const PYTHON_YAML: &str = include_str!("../fixes/python.yaml");

/// One fix template: the words, the commands (with `{branch}`, `{version}`… placeholders) and
/// where the row comes from.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Action {
    pub text: String,
    #[serde(default)]
    pub commands: Vec<String>,
    pub source: String,
}

type Actions = BTreeMap<String, Action>;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Family {
    pub id: String,
    pub name: String,
    /// os-release IDs (matched against ID, then ID_LIKE).
    pub ids: Vec<String>,
    /// PRETTY_NAME prefixes, for snapshots that only recorded the distribution's name.
    #[serde(default)]
    pub names: Vec<String>,
    #[serde(default)]
    pub versions: Vec<String>,
    /// VERSION_ID must start with this (Amazon Linux 2 against 2023).
    #[serde(default)]
    pub version_prefix: Option<String>,
    /// The package manager the commands use ("apt", "dnf", "yum", "zypper", "pacman").
    #[serde(default)]
    pub manager: Option<String>,
    #[serde(default)]
    pub shell: Option<String>,
    #[serde(default)]
    pub initramfs: Option<String>,
    /// Debian: VERSION_ID → branch → the package of the distribution's archive.
    #[serde(default)]
    pub branches: BTreeMap<String, BTreeMap<String, String>>,
    /// Rows of one release (VERSION_ID's major) that differ from the family's distribution rows.
    #[serde(default)]
    pub releases: BTreeMap<String, Actions>,
    #[serde(default)]
    pub distribution: Actions,
    #[serde(default, rename = "nvidia-repo")]
    pub nvidia_repo: Actions,
    #[serde(default)]
    pub precompiled: Actions,
    #[serde(default)]
    pub common: Actions,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DriverData {
    pub schema: String,
    pub data_version: String,
    pub guide: String,
    pub runfile: Actions,
    pub linux: Actions,
    pub families: Vec<Family>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PyTool {
    pub install: Option<String>,
    #[serde(default)]
    pub pypi_install: Option<String>,
    #[serde(default)]
    pub uninstall: Option<String>,
    #[serde(default)]
    pub index: Option<String>,
    #[serde(default)]
    pub index_setup: Option<String>,
    #[serde(default)]
    pub note: Option<String>,
    #[serde(default)]
    pub python: Option<String>,
    pub source: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CondaName {
    pub package: String,
    #[serde(default)]
    pub build: Option<String>,
    #[serde(default)]
    pub also: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PythonData {
    pub schema: String,
    pub data_version: String,
    pub tools: BTreeMap<String, PyTool>,
    pub conda: BTreeMap<String, CondaName>,
}

/// The embedded driver data (checked by the tests; a broken file gives no rows, never a panic).
pub fn driver_data() -> &'static DriverData {
    static D: OnceLock<DriverData> = OnceLock::new();
    D.get_or_init(|| {
        serde_saphyr::from_str(DRIVER_YAML).unwrap_or_else(|_| DriverData {
            schema: String::new(),
            data_version: String::new(),
            guide: "https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/".into(),
            runfile: Actions::new(),
            linux: Actions::new(),
            families: Vec::new(),
        })
    })
}

/// The embedded Python data.
pub fn python_data() -> &'static PythonData {
    static D: OnceLock<PythonData> = OnceLock::new();
    D.get_or_init(|| {
        serde_saphyr::from_str(PYTHON_YAML).unwrap_or_else(|_| PythonData {
            schema: String::new(),
            data_version: String::new(),
            tools: BTreeMap::new(),
            conda: BTreeMap::new(),
        })
    })
}

/// Parse errors of the embedded data, for the tests.
pub fn check_data() -> Result<(), String> {
    serde_saphyr::from_str::<DriverData>(DRIVER_YAML)
        .map_err(|e| format!("fixes/driver.yaml: {e}"))?;
    serde_saphyr::from_str::<PythonData>(PYTHON_YAML)
        .map_err(|e| format!("fixes/python.yaml: {e}"))?;
    Ok(())
}

/// The facts a fix is rendered from: what the snapshot says about the machine's terms. Never
/// probed here.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Terms {
    /// os-release ID ("ubuntu", "rocky", "windows").
    pub os_id: Option<String>,
    pub id_like: Vec<String>,
    pub version_id: Option<String>,
    /// Package managers on PATH, when probed.
    pub managers: Option<Vec<String>>,
    /// "distribution", "nvidia-repo", "runfile", "precompiled", "windows", "unknown".
    pub install_method: Option<String>,
    pub secure_boot: Option<bool>,
    /// The loaded module's flavour: Some(true) open, Some(false) proprietary.
    pub open_modules: Option<bool>,
}

impl Terms {
    /// The terms of a snapshot: its os-release (or, for snapshots that only recorded the
    /// distribution's name, that name), the driver's install method and module flavour.
    pub fn of(snap: &Snapshot) -> Terms {
        let mut t = Terms::default();
        if let Some(h) = snap.host.get() {
            if h.os == "windows" {
                t.os_id = Some("windows".into());
            } else if let Some(d) = &h.distribution {
                if let Some((id, version)) = from_pretty_name(d) {
                    t.os_id = Some(id);
                    t.version_id = version;
                }
            }
        }
        if let Some(o) = snap.os_release.get() {
            t.os_id = Some(o.id.clone());
            t.id_like = o.id_like.clone();
            t.version_id = o.version_id.clone();
        }
        t.managers = snap.package_managers.get().cloned();
        t.secure_boot = snap.secure_boot.get().map(|s| s.enabled);
        if let Some(i) = snap.driver.install.get() {
            t.install_method = Some(i.method.clone());
            t.open_modules = i.open_modules;
        }
        if let Some(m) = snap.driver.kernel_module.get() {
            t.open_modules = t.open_modules.or(match m.flavor.as_str() {
                "open" => Some(true),
                "proprietary" => Some(false),
                _ => None,
            });
        }
        t
    }

    pub fn windows(&self) -> bool {
        self.os_id.as_deref() == Some("windows")
    }

    /// The family of the data this machine belongs to: its ID first, then ID_LIKE.
    pub fn family(&self) -> Option<&'static Family> {
        let data = driver_data();
        let version = self.version_id.as_deref().unwrap_or("");
        let fits = |f: &&Family, id: &str| {
            f.ids.iter().any(|i| i == id)
                && f.version_prefix
                    .as_deref()
                    .is_none_or(|p| version == p || version.starts_with(&format!("{p}.")))
        };
        let ids = self.os_id.iter().chain(self.id_like.iter());
        for id in ids {
            if let Some(f) = data.families.iter().find(|f| fits(f, id)) {
                return Some(f);
            }
        }
        None
    }
}

/// (ID, VERSION_ID) from a distribution's PRETTY_NAME ("Ubuntu 22.04.4 LTS", "Rocky Linux 9.4
/// (Blue Onyx)"), through the families' `names`.
fn from_pretty_name(pretty: &str) -> Option<(String, Option<String>)> {
    let data = driver_data();
    for f in &data.families {
        for (i, n) in f.names.iter().enumerate() {
            if let Some(rest) = pretty.strip_prefix(n.as_str()) {
                let version = rest
                    .split_whitespace()
                    .next()
                    .filter(|w| w.starts_with(|c: char| c.is_ascii_digit()))
                    .map(|w| {
                        // Ubuntu's point release names its series: 22.04.4 → 22.04.
                        let parts: Vec<&str> = w.split('.').collect();
                        if f.id == "ubuntu" && parts.len() > 2 {
                            parts[..2].join(".")
                        } else {
                            w.to_string()
                        }
                    });
                let id = f.ids.get(i).or_else(|| f.ids.first())?.clone();
                return Some((id, version));
            }
        }
    }
    None
}

/// What a driver fix does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DriverAction {
    /// Install (or upgrade to) a branch, flavour chosen by the module loaded now when known.
    Install,
    InstallOpen,
    InstallProprietary,
    /// The user-space driver of the module's branch.
    Utils,
    FabricManager,
    DkmsRebuild,
    BlacklistNouveau,
    MokEnrol,
    /// JetPack's CUDA driver on a Jetson board.
    Jetpack,
}

impl DriverAction {
    pub fn key(self) -> &'static str {
        match self {
            DriverAction::Install => "install",
            DriverAction::InstallOpen => "install_open",
            DriverAction::InstallProprietary => "install_proprietary",
            DriverAction::Utils => "utils",
            DriverAction::FabricManager => "fabric_manager",
            DriverAction::DkmsRebuild => "dkms_rebuild",
            DriverAction::BlacklistNouveau => "blacklist_nouveau",
            DriverAction::MokEnrol => "mok_enrol",
            DriverAction::Jetpack => "jetpack",
        }
    }
    pub const ALL: &'static [DriverAction] = &[
        DriverAction::Install,
        DriverAction::InstallOpen,
        DriverAction::InstallProprietary,
        DriverAction::Utils,
        DriverAction::FabricManager,
        DriverAction::DkmsRebuild,
        DriverAction::BlacklistNouveau,
        DriverAction::MokEnrol,
        DriverAction::Jetpack,
    ];
}

/// A fix with its shell and whether it needs root: `sh` commands that start with `sudo`; a
/// PowerShell command that elevates itself.
pub fn make_fix(text: impl Into<String>, commands: Vec<String>, shell: &str) -> Fix {
    let needs_root = commands.iter().any(|c| needs_root(c, shell));
    Fix {
        text: text.into(),
        commands,
        shell: shell.to_string(),
        needs_root,
    }
}

/// True when a command needs root (sh: sudo) or an Administrator terminal (PowerShell/cmd).
pub fn needs_root(c: &str, shell: &str) -> bool {
    let c = c.trim();
    match shell {
        "sh" => c.starts_with("sudo ") || c.contains("| sudo ") || c.contains("&& sudo "),
        _ => {
            c.contains("-Verb RunAs")
                || c.starts_with("bcdedit")
                || c.starts_with("Set-ItemProperty -Path 'HKLM:")
                || c.starts_with("reg add HKLM")
        }
    }
}

/// The values a template is filled with.
#[derive(Debug, Clone, Default)]
pub struct Values<'a> {
    /// Driver branch ("580").
    pub branch: &'a str,
    /// Full driver version ("580.95.05"); the branch when unknown.
    pub version: Option<&'a str>,
}

fn fill(s: &str, vals: &[(&str, &str)]) -> String {
    let mut out = s.to_string();
    for (k, v) in vals {
        out = out.replace(&format!("{{{k}}}"), v);
    }
    out
}

/// The driver fix for this machine: the family's row for the action (the install method's
/// table, then the family's common rows), the .run installer's row when the driver came from
/// it, and for an unknown family how to find out, with NVIDIA's guide.
pub fn driver_fix(terms: &Terms, action: DriverAction, v: &Values) -> Fix {
    let data = driver_data();
    let version = v.version.unwrap_or(v.branch);
    let major = terms
        .version_id
        .as_deref()
        .and_then(|x| x.split('.').next())
        .unwrap_or("");
    let family = terms.family();
    let initramfs = family
        .and_then(|f| f.initramfs.as_deref())
        .unwrap_or("")
        .to_string();
    let (table, package) = action_table(terms, family, action, v.branch);
    let vals: Vec<(&str, &str)> = vec![
        ("branch", v.branch),
        ("version", version),
        ("major", major),
        ("package", package.as_str()),
        ("initramfs", initramfs.as_str()),
        ("guide", data.guide.as_str()),
    ];
    let shell = family
        .and_then(|f| f.shell.as_deref())
        .unwrap_or("sh")
        .to_string();
    let render = |a: &Action| {
        make_fix(
            fill(&a.text, &vals),
            a.commands.iter().map(|c| fill(c, &vals)).collect(),
            &shell,
        )
    };
    let key = action_key(terms, action);
    // A .run install is upgraded with a .run, never with packages.
    if terms.install_method.as_deref() == Some("runfile") && !terms.windows() {
        let k = if key.starts_with("install") {
            "install"
        } else {
            key
        };
        if let Some(a) = data.runfile.get(k) {
            return render(a);
        }
    }
    if action == DriverAction::BlacklistNouveau && !terms.windows() {
        if let (Some(a), Some(_)) = (data.linux.get("blacklist_nouveau"), family) {
            return render(a);
        }
    }
    let Some(f) = family else {
        if terms.windows() {
            return make_fix(
                "Install the NVIDIA driver for your GPU from NVIDIA's download page.",
                vec![],
                "powershell",
            );
        }
        return match data.linux.get("unknown") {
            Some(a) => render(a),
            None => make_fix(data.guide.clone(), vec![], "sh"),
        };
    };
    let release = f
        .releases
        .get(major)
        .filter(|_| table.is_some_and(|t| std::ptr::eq(t, &f.distribution)));
    let lookup = |k: &str| -> Option<&Action> {
        let t = table?;
        release
            .and_then(|r| r.get(k))
            .or_else(|| t.get(k))
            .or_else(|| {
                if k.starts_with("install_") {
                    t.get("install")
                } else {
                    None
                }
            })
            .or_else(|| f.common.get(k))
    };
    match lookup(key) {
        Some(a) => render(a),
        None => make_fix(
            format!(
                "gpudoctor has no {} command for {} in its data: follow the section for it in NVIDIA's driver installation guide ({}).",
                key.replace('_', " "),
                f.name,
                data.guide
            ),
            vec![],
            &shell,
        ),
    }
}

/// The family's table of rows for the install method (the distribution's by default), and on
/// Debian the archive's package of the branch (NVIDIA's repository when the archive lacks it).
fn action_table(
    terms: &Terms,
    family: Option<&'static Family>,
    action: DriverAction,
    branch: &str,
) -> (Option<&'static Actions>, String) {
    let mut package = String::new();
    let mut table: Option<&Actions> = None;
    if let Some(f) = family {
        let method = terms.install_method.as_deref().unwrap_or("distribution");
        table = Some(match method {
            "nvidia-repo" if !f.nvidia_repo.is_empty() => &f.nvidia_repo,
            "precompiled" if !f.precompiled.is_empty() => &f.precompiled,
            _ => &f.distribution,
        });
        // Debian: the archive carries some branches only; others come from NVIDIA's repository.
        if !f.branches.is_empty() && table.is_some_and(|t| std::ptr::eq(t, &f.distribution)) {
            let rel = terms
                .version_id
                .as_deref()
                .and_then(|x| x.split('.').next())
                .unwrap_or("");
            match f.branches.get(rel).and_then(|b| b.get(branch)) {
                Some(p) => package = p.clone(),
                None if matches!(
                    action,
                    DriverAction::Install
                        | DriverAction::InstallOpen
                        | DriverAction::InstallProprietary
                        | DriverAction::FabricManager
                ) =>
                {
                    table = Some(&f.nvidia_repo)
                }
                None => {}
            }
        }
    }
    (table, package)
}

/// The data's key for the action: an install of unknown flavour takes the open or proprietary
/// row when the modules' flavour is known.
fn action_key(terms: &Terms, action: DriverAction) -> &'static str {
    match action {
        DriverAction::Install => match terms.open_modules {
            Some(true) => "install_open",
            Some(false) => "install_proprietary",
            None => "install",
        },
        a => a.key(),
    }
}

/// The source of the row [`driver_fix`] used, for links.
pub fn driver_guide() -> &'static str {
    driver_data().guide.as_str()
}

/// Every package manager the data's commands use (for the Windows rewrite and the tests).
pub fn package_managers() -> Vec<&'static str> {
    let mut out: Vec<&str> = driver_data()
        .families
        .iter()
        .filter_map(|f| f.manager.as_deref())
        .collect();
    out.extend(["apt", "apt-get", "ubuntu-drivers", "rpm", "dpkg", "akmods"]);
    out.sort();
    out.dedup();
    out
}

/// True when a command installs packages with a Linux package manager.
pub fn is_package_command(c: &str) -> bool {
    let c = c.trim();
    let c = c.strip_prefix("sudo ").unwrap_or(c);
    let first = c.split_whitespace().next().unwrap_or("");
    package_managers().contains(&first)
}

// ---------------------------------------------------------------------------------------------
// Python

/// A Python install: flags ("--force-reinstall", "-U"), requirements ("torch==2.7.*",
/// "jax[cuda12]"), and the index a build comes from when it is not PyPI.
#[derive(Debug, Clone, Default)]
pub struct PyInstall<'a> {
    pub flags: Vec<&'a str>,
    pub reqs: Vec<String>,
    pub index_url: Option<String>,
}

impl<'a> PyInstall<'a> {
    pub fn new(reqs: &[&str]) -> Self {
        PyInstall {
            flags: Vec::new(),
            reqs: reqs.iter().map(|r| r.to_string()).collect(),
            index_url: None,
        }
    }
    pub fn flag(mut self, f: &'a str) -> Self {
        self.flags.push(f);
        self
    }
    pub fn index(mut self, url: impl Into<String>) -> Self {
        self.index_url = Some(url.into());
        self
    }
}

/// Which tool installs into this environment: the data's key.
pub fn python_tool(env: Option<&PythonEnv>) -> &'static str {
    let Some(env) = env else { return "pip" };
    match env.kind.as_str() {
        "uv" => "uv",
        "conda" => "conda",
        "poetry" => "poetry",
        "pixi" => "pixi",
        _ => "pip",
    }
}

fn quote(s: &str) -> String {
    if s.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-_.=/:".contains(&b))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', ""))
    }
}

/// The interpreter to name: the environment's, or `py -3.x` on Windows, or `python`.
fn interpreter(env: Option<&PythonEnv>, windows: bool) -> String {
    if let Some(i) = env.and_then(|e| e.interpreter.clone()) {
        return i;
    }
    if windows {
        let py = python_data()
            .tools
            .get("windows")
            .and_then(|t| t.python.clone())
            .unwrap_or_else(|| "py -{version}".into());
        if let Some(v) = env.and_then(|e| e.python_version.as_deref()) {
            let mm: Vec<&str> = v.split('.').take(2).collect();
            if mm.len() == 2 {
                return py.replace("{version}", &mm.join("."));
            }
        }
        return "py".into();
    }
    "python".into()
}

/// The name and version specifier of a requirement ("jax[cuda12]>=0.4,<0.5" → ("jax", ">=0.4,<0.5")).
fn split_req(r: &str) -> (String, String) {
    let end = r
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.'))
        .unwrap_or(r.len());
    let name = r[..end].to_string();
    let mut rest = &r[end..];
    if rest.starts_with('[') {
        rest = rest.find(']').map(|i| &rest[i + 1..]).unwrap_or("");
    }
    (name, rest.trim().to_string())
}

/// A PyPI requirement as conda match specs (conda-forge names from the data).
fn conda_specs(req: &str, index_url: Option<&str>) -> Vec<String> {
    let (name, spec) = split_req(req);
    let data = python_data();
    let m = data.conda.get(&name);
    let pkg = m.map(|c| c.package.clone()).unwrap_or(name.clone());
    let spec = if let Some(v) = spec.strip_prefix("==") {
        match v.strip_suffix(".*") {
            Some(prefix) => format!("={prefix}"),
            None => format!("=={v}"),
        }
    } else {
        spec
    };
    let mut out = Vec::new();
    match m.and_then(|c| c.build.as_deref()) {
        Some(b) if spec.is_empty() => out.push(format!("{pkg}=*={b}")),
        Some(b) => out.push(format!("{pkg}[version='{spec}',build='{b}']")),
        None => out.push(format!("{pkg}{spec}")),
    }
    if let Some(c) = m {
        for a in &c.also {
            // jax's version follows jaxlib's: the same range.
            out.push(format!("{a}{spec}"));
        }
    }
    // PyTorch's index names the CUDA of the build (…/whl/cu126): conda-forge's cuda-version.
    if let Some(tag) = index_url.and_then(|u| u.rsplit('/').next()) {
        if let Some(digits) = tag.strip_prefix("cu") {
            if digits.len() >= 3 && digits.bytes().all(|b| b.is_ascii_digit()) {
                let (maj, min) = digits.split_at(digits.len() - 1);
                out.push(format!("cuda-version={maj}.{min}"));
            }
        }
    }
    out
}

/// The install command(s) for this environment, and the note its tool needs (conda's warning,
/// Poetry's and Pixi's lock).
pub fn python_install(env: Option<&PythonEnv>, windows: bool, req: &PyInstall) -> Fix {
    let data = python_data();
    let tool_key = python_tool(env);
    let shell = if windows { "powershell" } else { "sh" };
    let Some(tool) = data.tools.get(tool_key).or_else(|| data.tools.get("pip")) else {
        return make_fix(String::new(), vec![], shell);
    };
    let python = interpreter(env, windows);
    let prefix = env.map(|e| e.prefix.clone()).unwrap_or_default();
    let conda_tool = env
        .and_then(extra_tool)
        .filter(|t| ["mamba", "micromamba", "conda"].contains(&t.as_str()))
        .unwrap_or_else(|| "conda".into());
    let mut commands = Vec::new();
    let index_name = req
        .index_url
        .as_deref()
        .and_then(|u| u.rsplit('/').next())
        .map(|t| format!("pytorch-{t}"))
        .unwrap_or_default();
    let args: String = match tool_key {
        "conda" => req
            .reqs
            .iter()
            .flat_map(|r| conda_specs(r, req.index_url.as_deref()))
            .map(|s| quote(&s))
            .collect::<Vec<_>>()
            .join(" "),
        _ => {
            let mut a: Vec<String> = Vec::new();
            if tool_key != "poetry" && tool_key != "pixi" {
                a.extend(req.flags.iter().map(|f| f.to_string()));
            }
            a.extend(req.reqs.iter().map(|r| quote(r)));
            if let (Some(url), Some(ix)) = (&req.index_url, &tool.index) {
                a.push(fill(ix, &[("url", url), ("index_name", &index_name)]));
            }
            a.join(" ")
        }
    };
    if let (Some(url), Some(setup)) = (&req.index_url, &tool.index_setup) {
        commands.push(fill(setup, &[("url", url), ("index_name", &index_name)]));
    }
    let template = if tool_key == "pixi" {
        tool.pypi_install.clone().or_else(|| tool.install.clone())
    } else {
        tool.install.clone()
    };
    if let Some(t) = template {
        commands.push(fill(
            &t,
            &[
                ("python", &python),
                ("prefix", &prefix),
                ("tool", &conda_tool),
                ("args", &args),
            ],
        ));
    }
    make_fix(tool.note.clone().unwrap_or_default(), commands, shell)
}

/// The one install command, for places that print a single line (recommend, compat).
pub fn python_install_command(env: Option<&PythonEnv>, windows: bool, req: &PyInstall) -> String {
    python_install(env, windows, req).commands.join(" && ")
}

/// The uninstall command for this environment.
pub fn python_uninstall(env: Option<&PythonEnv>, windows: bool, names: &[&str]) -> String {
    let data = python_data();
    let tool_key = python_tool(env);
    let Some(tool) = data.tools.get(tool_key) else {
        return String::new();
    };
    let python = interpreter(env, windows);
    let prefix = env.map(|e| e.prefix.clone()).unwrap_or_default();
    let conda_tool = env.and_then(extra_tool).unwrap_or_else(|| "conda".into());
    tool.uninstall
        .as_deref()
        .map(|t| {
            fill(
                t,
                &[
                    ("python", &python),
                    ("prefix", &prefix),
                    ("tool", &conda_tool),
                    ("names", &names.join(" ")),
                ],
            )
        })
        .unwrap_or_default()
}

/// The tool that made an environment when known ("mamba", "micromamba", "uv"…).
fn extra_tool(env: &PythonEnv) -> Option<String> {
    env.tool.clone()
}

#[cfg(test)]
#[path = "fixes_tests.rs"]
mod tests;
