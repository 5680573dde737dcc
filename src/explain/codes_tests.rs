//! Unit tests of `codes`: every family, in every form users paste.
use super::*;

fn p(s: &str) -> Vec<Match> {
    parse(s, &Matrix::default()).unwrap_or_default()
}

#[test]
fn the_keras_windows_code_in_every_form() {
    for form in [
        "-1073740791",
        "3221226505",
        "0xC0000409",
        "0xc0000409",
        "C0000409",
        "exit code -1073740791 (0xC0000409)",
    ] {
        let v = p(form);
        assert_eq!(v.len(), 1, "{form}: {v:#?}");
        assert_eq!(v[0].name, "STATUS_STACK_BUFFER_OVERRUN", "{form}");
        assert_eq!(v[0].kind, "ntstatus");
        assert!(v[0].meaning.contains("fail-fast"));
        assert!(v[0].likely_causes.iter().any(|c| c.contains("cuDNN")));
        assert!(v[0].fix.commands.contains(&"gpudoctor check".to_string()));
    }
    assert_eq!(p("-1073741819")[0].name, "STATUS_ACCESS_VIOLATION");
    assert_eq!(p("0xC00000FD")[0].name, "STATUS_STACK_OVERFLOW");
    for (code, name) in [
        (0xC000_001Du32, "STATUS_ILLEGAL_INSTRUCTION"),
        (0xC000_0017, "STATUS_NO_MEMORY"),
        (0xC000_0135, "STATUS_DLL_NOT_FOUND"),
        (0xC000_0142, "STATUS_DLL_INIT_FAILED"),
        (0xC000_0374, "STATUS_HEAP_CORRUPTION"),
        (0xC000_013A, "STATUS_CONTROL_C_EXIT"),
    ] {
        assert_eq!(p(&format!("0x{code:08X}"))[0].name, name);
        assert_eq!(p(&code.to_string())[0].name, name);
        assert_eq!(p(&(code as i32).to_string())[0].name, name);
    }
    assert_eq!(
        p("STATUS_HEAP_CORRUPTION")[0].code,
        serde_json::json!("STATUS_HEAP_CORRUPTION")
    );
    assert_eq!(p("0xC0001234")[0].confidence, "low", "unknown NTSTATUS");
}

#[test]
fn exit_statuses_and_signals() {
    let v = p("137");
    assert_eq!(v[0].name, "SIGKILL");
    assert!(v[0].meaning.contains("out-of-memory killer"));
    assert_eq!(v[0].confidence, "high");
    assert_eq!(p("139")[0].name, "SIGSEGV");
    assert_eq!(p("134")[0].name, "SIGABRT");
    assert_eq!(p("143")[0].name, "SIGTERM");
    assert!(p("135")[0].likely_causes[0].contains("/dev/shm"));
    assert_eq!(p("-9")[0].name, "SIGKILL", "Python subprocess form");
    assert_eq!(p("SIGSEGV")[0].kind, "signal");
    assert_eq!(p("127")[0].name, "command not found");
    // A status with no common meaning is named as what it is: `run`'s verdict on a job that
    // exited 3 read "exit status [application_error]" on the H200 (h200-2026-11-27-run1).
    let three = p("3");
    let exit = three.iter().find(|m| m.kind == "exit_code").unwrap();
    assert_eq!(exit.name, "program-specific failure code");
    assert!(
        exit.meaning.starts_with("exit status 3: "),
        "{}",
        exit.meaning
    );
}

#[test]
fn cuda_nvml_and_xid_codes_by_number_and_name() {
    assert_eq!(
        p("cudaErrorNoKernelImageForDevice")[0].code,
        serde_json::json!(209)
    );
    assert_eq!(
        p("CUDA_ERROR_NO_BINARY_FOR_GPU")[0].category,
        Category::ArchUnsupported
    );
    assert_eq!(
        p("CUDA_ERROR_SYSTEM_NOT_READY")[0].category,
        Category::FabricManager
    );
    assert_eq!(
        p("NVML_ERROR_LIB_RM_VERSION_MISMATCH")[0].code,
        serde_json::json!(18)
    );
    assert_eq!(p("Xid 79")[0].category, Category::HardwareFault);
    assert_eq!(p("xid 48")[0].category, Category::EccMemory);
    // An ambiguous small number: every reading, the CUDA error first.
    let v = p("46");
    let kinds: Vec<&str> = v.iter().map(|m| m.kind).collect();
    assert_eq!(kinds, vec!["cuda_error", "xid", "exit_code"]);
    assert_eq!((v[0].confidence, v[1].confidence), ("medium", "low"));
    // 13 is also cudaErrorInvalidSymbol (driver_types.h), a code people rarely meet: it comes
    // after the Xid and NVML readings.
    let v = p("13");
    let kinds: Vec<&str> = v.iter().map(|m| m.kind).collect();
    assert_eq!(kinds, vec!["xid", "nvml_error", "cuda_error", "exit_code"]);
    assert_eq!(v[2].name, "cudaErrorInvalidSymbol");
    assert_eq!(
        p("802")[0].name,
        "cudaErrorSystemNotReady / CUDA_ERROR_SYSTEM_NOT_READY"
    );
    assert!(p("hello world").is_empty());
    assert!(parse("the driver is too old", &Matrix::default()).is_none());
}

/// An NVML return code is named by NVML's name, go-nvml's (ERROR_X, printed while libnvidia-ml
/// is not loaded), pynvml's exception class, or nvmlErrorString's text after "nvml…:"; a line
/// that only mentions NVML names none.
#[test]
fn nvml_codes_in_the_forms_their_bindings_print() {
    for (line, name) in [
        (
            "nvml init failed: ERROR_LIBRARY_NOT_FOUND",
            "NVML_ERROR_LIBRARY_NOT_FOUND",
        ),
        (
            "error creating nvml.Device 0: nvml: Unknown Error, which is unexpected",
            "NVML_ERROR_UNKNOWN",
        ),
        (
            "pynvml.NVMLError_NotSupported: Not Supported",
            "NVML_ERROR_NOT_SUPPORTED",
        ),
        ("NVMLError_GpuIsLost", "NVML_ERROR_GPU_IS_LOST"),
        (
            "Failed to initialize NVML: GPU access blocked by the operating system",
            "NVML_ERROR_OPERATING_SYSTEM",
        ),
        ("nvml returned NVML_ERROR_TIMEOUT", "NVML_ERROR_TIMEOUT"),
    ] {
        let m = nvml_in_line(line).unwrap_or_else(|| panic!("{line}"));
        assert_eq!(m.name, name, "{line}");
    }
    for line in [
        "NVML is disabled. You won't see GPUs stats.",
        "nvml: Unknown Errors everywhere",
        "nvml: not a code",
        "ERROR_NOT_FOUND",
    ] {
        assert!(nvml_in_line(line).is_none(), "{line}");
    }
}
