// Package ociimage assembles Flotilla's container images without a
// container engine: each is a static binary on a small base layer (the
// nonroot user 65532, its home and /tmp; no shell, no package manager),
// with OCI labels, written as a `docker save` archive or pushed to a
// registry. Every file and the image config carry one fixed time, so two
// builds of one commit give one digest. hack/images is its command.
package ociimage
