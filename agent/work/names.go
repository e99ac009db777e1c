package work

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// AgentLabel marks every object the agent applied (and its
// AppliedManifestWorks) with AgentKey of the hub and cluster it applied
// them for. It lets the agent watch exactly its own objects, one narrow
// watch per kind, instead of caching every object of that kind.
const AgentLabel = "work.flotilla.io/agent"

// HubHash identifies a hub in AppliedManifestWork names and specs: the
// sha256 hex of its API server URL, as in OCM.
func HubHash(hubURL string) string {
	sum := sha256.Sum256([]byte(hubURL))
	return hex.EncodeToString(sum[:])
}

// AppliedManifestWorkName is the name of the spoke's record of ManifestWork
// work of the hub with hash hubHash.
func AppliedManifestWorkName(hubHash, work string) string {
	return hubHash + "-" + work
}

// workName returns the ManifestWork name of an AppliedManifestWork name of
// the hub with hash hubHash, and false for another hub's.
func workName(hubHash, applied string) (string, bool) {
	name, ok := strings.CutPrefix(applied, hubHash+"-")
	if !ok || name == "" {
		return "", false
	}
	return name, true
}

// AgentKey is the value of AgentLabel for the agent of cluster on the hub
// with hash hubHash: short enough for a label value, and different for
// every hub and cluster, so that agents sharing a spoke do not watch each
// other's objects.
func AgentKey(hubHash, cluster string) string {
	sum := sha256.Sum256([]byte(hubHash + "/" + cluster))
	return hex.EncodeToString(sum[:16])
}

// manifestHash is the hash of a manifest as the agent applies it, recorded
// in workv1.ObjectSpecHashAnnotation on the object: json.Marshal writes
// map keys in order, so equal objects hash alike whatever their key order.
func manifestHash(u *unstructured.Unstructured) string {
	data, err := json.Marshal(u.Object)
	if err != nil {
		// An object decoded from JSON always encodes again.
		panic(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// hashAnnotation is the annotation that records manifestHash.
const hashAnnotation = workv1.ObjectSpecHashAnnotation
