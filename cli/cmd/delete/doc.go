// Package delete is `flotilla delete work`: delete a ManifestWork from
// clusters, or a ManifestWorkReplicaSet, and optionally wait until the
// agents have removed what it applied.
package delete
