//! Unit tests of `explain::api_codes`: names and numbers with their API's context, and what is
//! not a code.
use super::*;

fn first(line: &str) -> Option<(String, &'static str)> {
    in_line(line)?
        .into_iter()
        .next()
        .map(|m| (m.name, m.category.as_str()))
}

#[test]
fn a_code_is_read_by_its_name_with_its_header_s_description() {
    let m = in_line("vkQueueSubmit returned VK_ERROR_DEVICE_LOST")
        .and_then(|v| v.into_iter().next())
        .expect("a reading");
    assert_eq!(m.name, "VK_ERROR_DEVICE_LOST (VkResult)");
    assert_eq!(m.code, serde_json::json!("-4"));
    assert_eq!(m.category.as_str(), "driver_fault");
    assert!(
        m.meaning.contains("The logical device has been lost"),
        "{}",
        m.meaning
    );
    // An alias is its own name, with its target's value.
    let (name, cat) = first("vkAllocateDescriptorSets: VK_ERROR_OUT_OF_POOL_MEMORY_KHR").unwrap();
    assert_eq!(name, "VK_ERROR_OUT_OF_POOL_MEMORY_KHR (VkResult)");
    let alias = in_line("VK_ERROR_OUT_OF_POOL_MEMORY_KHR").unwrap();
    assert_eq!(alias[0].code, serde_json::json!("-1000069000"));
    assert!(alias[0]
        .meaning
        .contains("another name of VK_ERROR_OUT_OF_POOL_MEMORY"));
    assert_eq!(cat, "application_error");
    // A name inside a longer one is not read: DXGI_ERROR_NOT_CURRENT in ..._NOT_CURRENTLY_AVAILABLE.
    let v = in_line("IDXGIOutputDuplication: DXGI_ERROR_NOT_CURRENTLY_AVAILABLE").unwrap();
    assert_eq!(
        v.len(),
        1,
        "{:?}",
        v.iter().map(|m| &m.name).collect::<Vec<_>>()
    );
}

#[test]
fn a_number_is_read_only_with_its_api_s_context() {
    for (line, name) in [
        ("VkResult -4", "VK_ERROR_DEVICE_LOST"),
        (
            "Result failed, VkResult=-3 at VulkanSwapChain.cpp:493",
            "VK_ERROR_INITIALIZATION_FAILED",
        ),
        ("vkCreateInstance failed -9", "VK_ERROR_INCOMPATIBLE_DRIVER"),
        (
            "[gamescope] [Error] vulkan: vkCreateDevice failed (VkResult: -7)",
            "VK_ERROR_EXTENSION_NOT_PRESENT",
        ),
        ("Error Code : 0x887A0005", "DXGI_ERROR_DEVICE_REMOVED"),
        ("Present failed, hr = 887a0006", "DXGI_ERROR_DEVICE_HUNG"),
        ("COMException (-2005270523)", "DXGI_ERROR_DEVICE_REMOVED"),
    ] {
        let got = first(line).map(|(n, _)| n).unwrap_or_default();
        assert!(got.starts_with(name), "{line:?} gave {got:?}");
    }
    for line in [
        "error -4",
        "the vk -4 shortcut",
        "exit status -9",
        "memory at 0x7ff6887a0005",
        "0x887a00ff",
        "commit 1887a0005b",
        "error 0x80004005",
        "vulkan 1.3 loaded, 2 devices, error count 0",
    ] {
        assert!(in_line(line).is_none(), "{line:?}");
    }
}

#[test]
fn a_dxgi_hresult_alone_is_not_an_ntstatus() {
    let m = crate::matrix::Matrix::default();
    for t in ["0x887A0005", "887A0005", "-2005270523"] {
        let v = crate::explain::codes::parse(t, &m).expect(t);
        assert_eq!(v.len(), 1, "{t}");
        assert!(
            v[0].name.starts_with("DXGI_ERROR_DEVICE_REMOVED"),
            "{t}: {}",
            v[0].name
        );
    }
    // Another HRESULT is still read as before.
    let v = crate::explain::codes::parse("0xC0000409", &m).expect("ntstatus");
    assert_eq!(v[0].kind, "ntstatus");
}

/// The catalog's number signatures (vulkan-result-number, dxgi-hresult-number,
/// nvenc-status-number) narrow their lines with a regex for speed; it must find exactly the lines
/// whose number `NUMBER_FORMS` reads, or a reading would be lost (or a line read for nothing).
#[test]
fn the_number_signatures_agree_with_the_number_forms() {
    let cat = crate::explain::embedded_catalog().expect("catalog");
    let number_sigs = [
        "vulkan-result-number",
        "dxgi-hresult-number",
        "nvenc-status-number",
    ];
    for line in [
        "VkResult -4",
        "vkCreateInstance failed -9",
        "[gamescope] [Error] vulkan: vkCreateDevice failed (VkResult: -7)",
        "Result failed, VkResult=-3 at VulkanSwapChain.cpp:493",
        "Error Code : 0x887A0005",
        "Present failed, hresult 887a0006",
        "COMException (-2005270523)",
        "D3D9 Present: 0x88760868",
        "NvEncoder : m_nvenc.nvEncOpenEncodeSessionEx(&p, &h) returned error 10",
        "nvenc : Error on nvEncInitializeEncoder: 8 (DPB size)",
        "[h264_nvenc @ 0x46d8300] OpenEncodeSessionEx failed: out of memory (10): (no details)",
        "vulkan 1.3 loaded, error count 0",
        "memory at 0x7ff6887a0005",
        "nvenc : Opened Encode Session (API ver 12.1)",
    ] {
        let n = crate::explain::catalog::normalise(line);
        let read = by_number(&n).is_some();
        let fired = cat.matches(line).iter().any(|&i| {
            cat.signatures
                .get(i)
                .is_some_and(|s| number_sigs.contains(&s.id.as_str()))
        });
        assert_eq!(
            read, fired,
            "{line:?}: read {read}, a number signature fired {fired}"
        );
    }
}
