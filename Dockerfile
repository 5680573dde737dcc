# The gpudoctor image for the Kubernetes DaemonSet in scripts/k8s/gpudoctor-daemonset.yaml:
# Debian 12 slim with the release binary, its man page and completions, installed from the
# release tarball by install.sh (which verifies it against SHA256SUMS). The NVIDIA container
# runtime mounts the driver's libraries (libnvidia-ml, libcuda) and /dev/nvidia* at run time;
# nothing of NVIDIA's is in the image.
#
# Build the tarballs first, then the image for both architectures (Grace nodes are arm64):
#   scripts/release.sh
#   docker buildx build --platform linux/amd64,linux/arm64 \
#     -t REGISTRY/gpudoctor:VERSION --push .
# (or, for this machine's architecture only: docker build -t REGISTRY/gpudoctor:VERSION .)
# .dockerignore sends only dist/ into the build.

FROM debian:12-slim AS install
COPY dist/ /dist/
# install.sh takes the tarball for the platform being built (buildx runs this step under that
# platform, so `uname -m` is its architecture), refuses a checksum mismatch, and refuses when
# dist/ holds several versions for it.
RUN sh /dist/install.sh --prefix /opt/gpudoctor

FROM debian:12-slim
COPY --from=install /opt/gpudoctor/ /usr/local/
# What the NVIDIA container runtime reads to mount the driver into the container.
ENV NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=utility,compute
# Runs as root: it reads /dev/kmsg (Xid errors) and opens /dev/nvidia* like the driver's tools.
ENTRYPOINT ["/usr/local/bin/gpudoctor"]
CMD ["check"]
