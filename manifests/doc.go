// Package manifests embeds the generated Kubernetes manifests that the
// binaries install: the hub's CRDs (everything the hub serves) and the
// agent's CRDs (what a managed cluster serves: AppliedManifestWork,
// ClusterClaim, ConfigurationPolicy). The CRDs under spoke-owner/ (the
// About API's ClusterProperty) belong to the managed cluster's owner: no
// binary installs them, the agent only reads them where they are served.
//
// Nothing here is edited by hand: `make generate` writes the YAML from the
// types in the api module.
package manifests
