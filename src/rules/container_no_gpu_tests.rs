//! `container.no-gpu`'s cases (tests/it/rules.rs `container_without_gpu`, and the recorded
//! Docker machines: the no-driver one without GPU access, the H100 one with it).
use super::RULE;
use crate::report::{Category::ContainerNoGpu, Severity::Error};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

const DOCKER: &[(&str, &str)] = &[
    ("/host/value/container", r#""docker""#),
    ("/host/value/container_markers", r#"["/.dockerenv"]"#),
];

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "recorded-docker-without-gpus",
            base: NoDriver,
            expect: Fires(Error, ContainerNoGpu),
            ..CASE
        },
        // The recorded H100 ran in Docker with the GPU passed in.
        Case {
            name: "recorded-docker-h100-with-gpu",
            base: H100,
            expect: Quiet,
            ..CASE
        },
        Case {
            name: "docker-with-device-nodes",
            set: DOCKER,
            expect: Quiet,
            ..CASE
        },
        Case {
            name: "docker-no-device-nodes",
            set: &[DOCKER[0], DOCKER[1], ("/driver/device_nodes/value", "[]")],
            expect: Fires(Error, ContainerNoGpu),
            ..CASE
        },
        Case {
            name: "kubernetes-nvidia-visible-devices-void",
            set: &[
                ("/host/value/container", r#""kubernetes""#),
                (
                    "/host/value/container_markers",
                    r#"["KUBERNETES_SERVICE_HOST"]"#,
                ),
                ("/env/NVIDIA_VISIBLE_DEVICES", r#""void""#),
            ],
            expect: Fires(Error, ContainerNoGpu),
            ..CASE
        },
        Case {
            name: "podman-no-device-nodes",
            set: &[
                ("/host/value/container", r#""podman""#),
                ("/host/value/container_markers", r#"["/run/.containerenv"]"#),
                ("/driver/device_nodes/value", "[]"),
            ],
            expect: Fires(Error, ContainerNoGpu),
            ..CASE
        },
        Case {
            name: "bare-host-no-device-nodes",
            set: &[("/driver/device_nodes/value", "[]")],
            expect: Quiet,
            ..CASE
        },
        Case {
            name: "device-nodes-not-probed",
            base: NoDriver,
            set: &[(
                "/driver/device_nodes",
                r#"{"status": "absent", "why": "not probed", "code": "not_probed"}"#,
            )],
            expect: Quiet,
            ..CASE
        },
    ],
};

#[test]
fn cases() {
    run_table(&TABLE);
}
