package addon

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// SpecHash is the spec hash of a config as OCM computes it, so that hub
// managers built on OCM's framework and ours agree: the object as served
// (unstructured content), less apiVersion, kind, metadata and status,
// marshalled by encoding/json (sorted keys, HTML escaping on), SHA-256,
// lower-case hex.
func SpecHash(obj map[string]any) (string, error) {
	rest := make(map[string]any, len(obj))
	for k, v := range obj {
		switch k {
		case "apiVersion", "kind", "metadata", "status":
			continue
		}
		rest[k] = v
	}
	b, err := json.Marshal(rest)
	if err != nil {
		return "", fmt.Errorf("spec hash: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}
