#![allow(clippy::print_stderr)]
//! Unit tests of `python`.
use super::*;

#[test]
fn dist_info_names() {
    assert_eq!(
        dist_from_dir_name("nvidia_cuda_runtime_cu12-12.9.79.dist-info").unwrap(),
        ("nvidia-cuda-runtime-cu12".into(), "12.9.79".into())
    );
    assert_eq!(
        dist_from_dir_name("torch-2.7.1.dist-info").unwrap(),
        ("torch".into(), "2.7.1".into())
    );
    assert_eq!(
        dist_from_dir_name("jax_cuda12_plugin-0.4.30.dist-info")
            .unwrap()
            .0,
        "jax-cuda12-plugin"
    );
    assert_eq!(
        dist_from_dir_name("cupy-12.0.0-py3.10.egg-info").unwrap(),
        ("cupy".into(), "12.0.0".into())
    );
    assert!(dist_from_dir_name("torch").is_none());
}

#[test]
fn deep_output_tagged_json() {
    let ok = "noise\nGPUDOCTOR_DEEP {\"result\": \"success\", \"torch\": null}\n";
    assert!(parse_deep_output(ok).unwrap().is_found());
    assert!(parse_deep_output("nothing here").is_none());
    assert!(!parse_deep_output("GPUDOCTOR_DEEP {bad").unwrap().is_found());
}

/// Windows: `python` is found as `python.exe` through PATHEXT, the Store's WindowsApps alias is
/// passed over, and a python.org install's prefix is the folder of python.exe, with its version
/// from python311.dll and the user site under %APPDATA%.
#[test]
fn a_windows_install_is_found_on_path_and_in_its_folders() {
    let Some(win) = crate::probe::windows::tests::test_files() else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let apps = d.path().join("Microsoft").join("WindowsApps");
    std::fs::create_dir_all(&apps).unwrap();
    std::fs::write(apps.join("python.exe"), b"").unwrap();
    let local = d.path().join("Local");
    let prefix = local.join("Programs").join("Python").join("Python311");
    crate::probe::windows::tests::make_test_install(&prefix, &win);
    let roaming = d.path().join("Roaming");
    let user_site = roaming
        .join("Python")
        .join("Python311")
        .join("site-packages");
    std::fs::create_dir_all(&user_site).unwrap();
    let path = std::env::join_paths([apps.clone(), prefix.clone()]).unwrap();
    let path = path.to_string_lossy().into_owned();

    assert_eq!(
        which_windows(&path, "python", Some(".COM;.EXE;.BAT")),
        Some(prefix.join("python.exe"))
    );
    assert_eq!(which_windows(&path, "python", Some(".COM;.BAT")), None);
    assert_eq!(which_windows(&path, "python3", None), None);

    let src = Sources {
        windows: true,
        path_var: Some(path),
        local_app_data: Some(local.to_string_lossy().into_owned()),
        app_data: Some(roaming.to_string_lossy().into_owned()),
        ..Default::default()
    };
    let envs = probe(&src, None);
    // Found on PATH and again under %LOCALAPPDATA%: one environment.
    assert_eq!(envs.len(), 1, "{envs:#?}");
    let e = &envs[0];
    assert_eq!(e.origin, "PATH python");
    assert_eq!(e.kind, "system");
    assert_eq!(Path::new(&e.prefix), prefix);
    assert_eq!(e.python_version.as_deref(), Some("3.11"));
    assert_eq!(
        e.site_packages,
        [
            prefix
                .join("Lib")
                .join("site-packages")
                .to_string_lossy()
                .into_owned(),
            user_site.to_string_lossy().into_owned()
        ]
    );
    let torch = e.torch.as_ref().unwrap();
    assert_eq!(torch.version, "2.11.0+cpu");
    assert!(e
        .packages
        .iter()
        .any(|p| p.name == "nvidia-cudnn-cu12" && p.version == "9.1.0.70"));

    // Without PATH, the install folder alone finds it.
    let src = Sources {
        path_var: None,
        ..src
    };
    let envs = probe(&src, None);
    assert_eq!(envs.len(), 1);
    assert_eq!(envs[0].origin, "%LOCALAPPDATA%\\Programs\\Python");
}

/// Conda on Windows: the base's python.exe beside conda-meta, and each of its envs.
#[test]
fn conda_installs_and_envs_on_windows() {
    let Some(win) = crate::probe::windows::tests::test_files() else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let base = d.path().join("miniforge3");
    crate::probe::windows::tests::make_test_install(&base, &win);
    std::fs::create_dir_all(base.join("conda-meta")).unwrap();
    let env = base.join("envs").join("tf210");
    std::fs::create_dir_all(env.join("Lib").join("site-packages")).unwrap();
    std::fs::create_dir_all(env.join("conda-meta")).unwrap();
    std::fs::write(env.join("python.exe"), b"").unwrap();
    std::fs::write(env.join("python310.dll"), b"").unwrap();
    let src = Sources {
        windows: true,
        user_profile: Some(d.path().to_string_lossy().into_owned()),
        ..Default::default()
    };
    let envs = probe(&src, None);
    let got: Vec<(&str, &str, Option<&str>)> = envs
        .iter()
        .map(|e| {
            (
                e.kind.as_str(),
                e.origin.as_str(),
                e.python_version.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("conda", "%USERPROFILE%\\miniforge3", Some("3.11")),
            ("conda", "%USERPROFILE%\\miniforge3\\envs", Some("3.10")),
        ]
    );
}

/// The build_info.py of TensorFlow 2.10.0's Windows wheel
/// (tensorflow-2.10.0-cp310-cp310-win_amd64.whl on PyPI, read by scripts/wheel-files.py): its
/// versions are DLL-name suffixes.
#[test]
fn tensorflow_windows_build_info() {
    let text = "import collections\n\nbuild_info = collections.OrderedDict([('cpu_compiler', 'C:/Program Files (x86)/Microsoft Visual Studio/2019/Community/VC/Tools/MSVC/14.29.30133/bin/HostX64/x64/cl.exe'), ('cuda_compute_capabilities', ['sm_35', 'sm_50', 'sm_60', 'sm_70', 'sm_75', 'compute_80']), ('cuda_version', '64_112'), ('cudart_dll_name', 'cudart64_112.dll'), ('cudnn_dll_name', 'cudnn64_8.dll'), ('cudnn_version', '64_8'), ('is_cuda_build', True), ('is_rocm_build', False), ('is_tensorrt_build', False), ('msvcp_dll_names', 'msvcp140.dll,msvcp140_1.dll'), ('nvcuda_dll_name', 'nvcuda.dll')])\n";
    let b = parse_tf_build_info(text);
    assert_eq!(b.cuda_version.as_deref(), Some("11.2"));
    assert_eq!(b.cudnn_version.as_deref(), Some("8"));
    assert_eq!(b.is_cuda_build, Some(true));
    assert_eq!(windows_dll_version("64_101"), "10.1");
    assert_eq!(windows_dll_version("64_92"), "9.2");
    assert_eq!(windows_dll_version("12.2"), "12.2");
}

/// Issue 32: the prefix of a venv or conda environment whose bin/ (Scripts\\) holds the binary;
/// nothing for a binary elsewhere or in a tool's own environment.
#[test]
fn the_environment_of_the_running_binary() {
    let d = tempfile::tempdir().unwrap();
    let venv = d.path().join("venv");
    std::fs::create_dir_all(venv.join("lib/python3.12/site-packages")).unwrap();
    std::fs::create_dir_all(venv.join("bin")).unwrap();
    std::fs::write(venv.join("pyvenv.cfg"), "version = 3.12.3\n").unwrap();
    let e = own_environment(&venv.join("bin/gpudoctor")).unwrap();
    assert_eq!(e.prefix, venv.to_string_lossy());
    assert_eq!((e.kind.as_str(), e.origin.as_str()), ("venv", OWN_ORIGIN));
    assert_eq!(e.python_version.as_deref(), Some("3.12"));
    // Not in bin/: a release tarball's prefix, a cargo install.
    assert!(own_environment(&venv.join("gpudoctor")).is_none());
    assert!(own_environment(&d.path().join("bin/gpudoctor")).is_none());

    // A conda environment on Windows: Scripts\\gpudoctor.exe, Lib\\site-packages, python.exe.
    let conda = d.path().join("envs").join("ml");
    std::fs::create_dir_all(conda.join("Lib").join("site-packages")).unwrap();
    std::fs::create_dir_all(conda.join("conda-meta")).unwrap();
    std::fs::create_dir_all(conda.join("Scripts")).unwrap();
    std::fs::write(conda.join("python.exe"), "").unwrap();
    let e = own_environment(&conda.join("Scripts").join("gpudoctor.exe")).unwrap();
    assert_eq!(
        (e.prefix.as_str(), e.kind.as_str()),
        (&*conda.to_string_lossy(), "conda")
    );
    assert_eq!(
        e.interpreter,
        Some(conda.join("python.exe").to_string_lossy().into_owned())
    );

    // uv tool install's environment.
    std::fs::write(venv.join("uv-receipt.toml"), "[tool]\n").unwrap();
    assert!(own_environment(&venv.join("bin/gpudoctor")).is_none());
}

// ---- environment kinds (issue 31) ----

#[cfg(unix)]
/// The uv binary for the kind tests: $GPUDOCTOR_TEST_UV, .venv-test/bin/uv (scripts/test-setup.sh
/// unpacks it from PyPI's uv wheel), or uv on PATH.
fn test_uv() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("GPUDOCTOR_TEST_UV") {
        return Some(PathBuf::from(p));
    }
    let local = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv-test/bin/uv");
    if local.is_file() {
        return Some(local);
    }
    which(&std::env::var("PATH").ok()?, "uv")
}

#[cfg(unix)]
fn run_ok(cmd: &mut std::process::Command) {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[cfg(unix)]
#[test]
fn a_real_uv_venv_is_uv_and_a_real_venv_is_venv_unless_a_lock_file_says_otherwise() {
    let path = std::env::var("PATH").unwrap_or_default();
    let Some(python) = which(&path, "python3") else {
        panic!("python3 is needed on PATH for this test");
    };
    let d = tempfile::tempdir().unwrap();
    // python3 -m venv: a plain venv; beside a poetry.lock it is Poetry's, beside uv.lock uv's.
    let proj = d.path().join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    run_ok(
        std::process::Command::new(&python)
            .args(["-m", "venv", "--without-pip"])
            .arg(proj.join(".venv")),
    );
    let venv = proj.join(".venv");
    assert_eq!(env_kind(&venv), Some(("venv", None)));
    std::fs::write(proj.join("poetry.lock"), "").unwrap();
    assert_eq!(env_kind(&venv), Some(("poetry", Some("poetry"))));
    std::fs::remove_file(proj.join("poetry.lock")).unwrap();
    std::fs::write(proj.join("uv.lock"), "").unwrap();
    assert_eq!(env_kind(&venv), Some(("uv", Some("uv"))));
    // classify() on what the probe found through VIRTUAL_ENV.
    let mut env = from_prefix(&venv, "venv", "VIRTUAL_ENV", None).unwrap();
    classify(&mut env);
    assert_eq!((env.kind.as_str(), env.tool.as_deref()), ("uv", Some("uv")));

    // A venv made by the real uv: `uv = <version>` in its pyvenv.cfg, no lock file needed.
    let Some(uv) = test_uv() else {
        eprintln!(
            "SKIPPED the uv part: no uv (run scripts/test-setup.sh, or set GPUDOCTOR_TEST_UV)"
        );
        return;
    };
    let made = d.path().join("made-by-uv");
    run_ok(
        std::process::Command::new(&uv)
            .args(["venv", "--no-config", "--python"])
            .arg(&python)
            .arg(&made)
            .env("UV_NO_CACHE", "1")
            .env("UV_PYTHON_DOWNLOADS", "never")
            .env("UV_OFFLINE", "1"),
    );
    let cfg = std::fs::read_to_string(made.join("pyvenv.cfg")).unwrap();
    assert!(cfg.lines().any(|l| l.starts_with("uv = ")), "{cfg}");
    assert_eq!(env_kind(&made), Some(("uv", Some("uv"))));
    let mut env = from_prefix(&made, "venv", "VIRTUAL_ENV", None).unwrap();
    classify(&mut env);
    assert_eq!(env.kind, "uv");
}

#[test]
fn conda_prefixes_name_their_tool_from_the_recorded_history_or_the_path() {
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conda-meta");
    let prefix_with = |dir: &Path, history: Option<&str>| {
        std::fs::create_dir_all(dir.join("conda-meta")).unwrap();
        if let Some(h) = history {
            std::fs::copy(fx.join(h), dir.join("conda-meta/history")).unwrap();
        }
    };
    let d = tempfile::tempdir().unwrap();
    // Anaconda on Windows records `…\Scripts\conda-script.py create …`.
    let a = d.path().join("anaconda3/envs/py37");
    prefix_with(&a, Some("anaconda-win-py37.history"));
    assert_eq!(env_kind(&a), Some(("conda", Some("conda"))));
    // Miniforge's installer (constructor) records no tool of its own: conda.
    let m = d.path().join("miniforge3");
    prefix_with(&m, Some("miniforge3-base.history"));
    assert_eq!(env_kind(&m), Some(("conda", Some("conda"))));
    // micromamba's and mamba's prefixes by their path.
    let mm = d.path().join("micromamba/envs/torch");
    prefix_with(&mm, None);
    assert_eq!(env_kind(&mm), Some(("conda", Some("micromamba"))));
    let mf = d.path().join("mambaforge/envs/torch");
    prefix_with(&mf, None);
    assert_eq!(env_kind(&mf), Some(("conda", Some("mamba"))));
    // Pixi's environments are conda prefixes too, under .pixi/envs.
    let px = d.path().join("proj/.pixi/envs/default");
    prefix_with(&px, None);
    assert_eq!(env_kind(&px), Some(("pixi", Some("pixi"))));
    // Poetry's cache, and nothing at all.
    let pc = d
        .path()
        .join(".cache/pypoetry/virtualenvs/app-AbC123-py3.11");
    std::fs::create_dir_all(&pc).unwrap();
    std::fs::write(
        pc.join("pyvenv.cfg"),
        "home = /usr/bin\nvirtualenv = 20.26.6\n",
    )
    .unwrap();
    assert_eq!(env_kind(&pc), Some(("poetry", Some("poetry"))));
    assert_eq!(env_kind(&d.path().join("nothing")), None);
    // An assumed environment is never reclassified.
    let mut assumed = PythonEnv {
        prefix: px.to_string_lossy().into_owned(),
        kind: "assumed".into(),
        ..Default::default()
    };
    classify(&mut assumed);
    assert_eq!(assumed.kind, "assumed");
}
