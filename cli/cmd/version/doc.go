// Package version is `flotilla version`: the version of flotilla, and of
// the API server of the kubeconfig when it answers.
package version
