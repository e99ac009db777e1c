package render

import (
	"fmt"
	"strings"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// containerLists are the pod spec fields whose containers overrides change.
var containerLists = []string{"initContainers", "containers"}

// containers returns the containers and init containers of a manifest with
// a pod spec, as the maps inside obj so that changes land in place.
func containers(obj map[string]any, kind string) ([]map[string]any, error) {
	path := podKinds[kind]
	spec, err := nestedMap(obj, false, path...)
	if err != nil || spec == nil {
		return nil, err
	}
	var out []map[string]any
	for _, list := range containerLists {
		items, ok := spec[list].([]any)
		if !ok {
			if spec[list] != nil {
				return nil, fmt.Errorf("%s.%s is not a list", strings.Join(path, "."), list)
			}
			continue
		}
		for i, it := range items {
			c, ok := it.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s.%s[%d] is not an object", strings.Join(path, "."), list, i)
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// containerNames lists the names of a manifest's containers.
func containerNames(m manifest) []string {
	cs, _ := containers(m.obj, m.kind)
	names := make([]string, 0, len(cs))
	for _, c := range cs {
		if n, ok := c["name"].(string); ok {
			names = append(names, n)
		}
	}
	return names
}

// applyImage sets the image (or only its tag) of the containers it names.
func applyImage(obj map[string]any, kind string, o workv1alpha1.ImageOverride) error {
	cs, err := containers(obj, kind)
	if err != nil {
		return err
	}
	for _, c := range cs {
		if o.Container != "" && c["name"] != o.Container {
			continue
		}
		if o.Image != "" {
			c["image"] = o.Image
			continue
		}
		cur, _ := c["image"].(string)
		if cur == "" {
			return fmt.Errorf("container %v has no image whose tag could change — set image instead of tag", c["name"])
		}
		c["image"] = retag(cur, o.Tag)
	}
	return nil
}

// retag replaces the tag or digest of an image reference. A tag holding a
// colon (sha256:…) is a digest and joins with @.
func retag(image, tag string) string {
	base := image
	if i := strings.Index(base, "@"); i >= 0 {
		base = base[:i]
	}
	if i := strings.LastIndex(base, ":"); i > strings.LastIndex(base, "/") {
		base = base[:i]
	}
	tag = strings.TrimLeft(tag, ":@")
	if strings.Contains(tag, ":") {
		return base + "@" + tag
	}
	return base + ":" + tag
}

// applyEnv sets one variable in the containers it names: replaces the entry
// of that name (dropping any valueFrom) or appends one.
func applyEnv(obj map[string]any, kind string, o workv1alpha1.EnvOverride) error {
	cs, err := containers(obj, kind)
	if err != nil {
		return err
	}
	for _, c := range cs {
		if o.Container != "" && c["name"] != o.Container {
			continue
		}
		entry := map[string]any{"name": o.Name, "value": o.Value}
		env, ok := c["env"].([]any)
		if !ok && c["env"] != nil {
			return fmt.Errorf("container %v: env is not a list", c["name"])
		}
		replaced := false
		for i, e := range env {
			if em, ok := e.(map[string]any); ok && em["name"] == o.Name {
				env[i] = entry
				replaced = true
			}
		}
		if !replaced {
			env = append(env, entry)
		}
		c["env"] = env
	}
	return nil
}
