// Package kubeapply brings objects on an API server in line with wanted
// definitions: create-or-update of a typed object or of one part of it, and
// the installation of CRDs, waiting until they are served. The hub installs
// its objects with it and the agent its spoke-side CRDs.
package kubeapply
