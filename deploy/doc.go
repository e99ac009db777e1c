// Package deploy holds what a person installs Flotilla with on existing
// clusters: the Helm charts under charts/ (the one source) and the
// kustomize bases under kustomize/, generated from the charts by
// `make generate`. The charts are embedded, and Render renders them with
// Helm's engine, so that `flotilla join` and `flotilla init --dry-run`
// install and print exactly what the charts do.
package deploy
