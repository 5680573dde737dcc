//! The display adapters Device Manager lists, read through SetupAPI (the display class,
//! present devices): each one's description, first hardware id, driver service and problem
//! code. An NVIDIA GPU with "Code 43", or one left on Microsoft Basic Display Adapter, is
//! what the `windows.adapter` rule reads here.

use crate::snapshot::DisplayAdapter;

/// A REG_MULTI_SZ (UTF-16, NUL-separated, double-NUL-ended) as strings; a REG_SZ gives one.
pub fn multi_sz(units: &[u16]) -> Vec<String> {
    units
        .split(|u| *u == 0)
        .filter(|s| !s.is_empty())
        .map(|s| crate::sanitize::clean_line(&String::from_utf16_lossy(s), 200))
        .collect()
}

/// The present display adapters, in SetupAPI's order; empty when none can be listed.
#[cfg(windows)]
pub fn probe() -> Vec<DisplayAdapter> {
    use windows_sys::Win32::Devices::DeviceAndDriverInstallation::{
        CM_Get_DevNode_Status, SetupDiDestroyDeviceInfoList, SetupDiEnumDeviceInfo,
        SetupDiGetClassDevsW, CR_SUCCESS, DIGCF_PRESENT, DN_HAS_PROBLEM, GUID_DEVCLASS_DISPLAY,
        SPDRP_DEVICEDESC, SPDRP_HARDWAREID, SPDRP_SERVICE, SP_DEVINFO_DATA,
    };
    // SAFETY: a device-information set for the display class, destroyed below.
    let set = unsafe {
        SetupDiGetClassDevsW(
            &GUID_DEVCLASS_DISPLAY,
            std::ptr::null(),
            std::ptr::null_mut(),
            DIGCF_PRESENT,
        )
    };
    if set == -1 || set == 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for i in 0..64u32 {
        let mut data = SP_DEVINFO_DATA {
            cbSize: std::mem::size_of::<SP_DEVINFO_DATA>() as u32,
            ..Default::default()
        };
        // SAFETY: `data` is sized as SetupAPI requires.
        if unsafe { SetupDiEnumDeviceInfo(set, i, &mut data) } == 0 {
            break;
        }
        let prop = |p: u32| -> Vec<String> {
            let mut buf = vec![0u16; 1024];
            let mut need = 0u32;
            // SAFETY: the buffer's size is given in bytes; `need` is a valid out-pointer.
            let ok = unsafe {
                windows_sys::Win32::Devices::DeviceAndDriverInstallation::SetupDiGetDeviceRegistryPropertyW(
                    set,
                    &data,
                    p,
                    std::ptr::null_mut(),
                    buf.as_mut_ptr().cast(),
                    (buf.len() * 2) as u32,
                    &mut need,
                )
            };
            if ok == 0 {
                return Vec::new();
            }
            multi_sz(&buf)
        };
        let (mut status, mut problem) = (0u32, 0u32);
        // SAFETY: two valid out-pointers and the device instance SetupAPI gave.
        let cr = unsafe { CM_Get_DevNode_Status(&mut status, &mut problem, data.DevInst, 0) };
        out.push(DisplayAdapter {
            name: prop(SPDRP_DEVICEDESC)
                .into_iter()
                .next()
                .unwrap_or_default(),
            hardware_id: prop(SPDRP_HARDWAREID).into_iter().next(),
            service: prop(SPDRP_SERVICE).into_iter().next(),
            problem: (cr == CR_SUCCESS && status & DN_HAS_PROBLEM != 0).then_some(problem),
        });
    }
    // SAFETY: the set made above.
    unsafe {
        SetupDiDestroyDeviceInfoList(set);
    }
    out
}

#[cfg(not(windows))]
pub fn probe() -> Vec<DisplayAdapter> {
    Vec::new()
}

#[cfg(test)]
#[path = "adapters_tests.rs"]
mod tests;
