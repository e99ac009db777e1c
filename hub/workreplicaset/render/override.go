package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// override is a checked ClusterOverride: its clusters compiled, its targets
// resolved against the template and its patch decoded.
type override struct {
	src      workv1alpha1.ClusterOverride
	where    string // overrides[i] "name", for messages
	clusters clusterSet
	targets  []int // indexes of the template manifests it targets
	patch    []patchOp
}

// compileOverrides checks every override against the template. Everything
// that can be known without a cluster is checked here, so a typo fails the
// same way whichever clusters are chosen.
func compileOverrides(src []workv1alpha1.ClusterOverride, manifests []manifest) ([]override, error) {
	out := make([]override, len(src))
	for i, o := range src {
		where := fmt.Sprintf("overrides[%d]", i)
		if o.Name != "" {
			where += fmt.Sprintf(" %q", o.Name)
		}
		c, err := compileOverride(o, manifests)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		c.where = where
		out[i] = c
	}
	return out, nil
}

// compileOverride checks one override; errors leave out which override.
func compileOverride(o workv1alpha1.ClusterOverride, manifests []manifest) (override, error) {
	c := override{src: o}
	var err error
	if c.clusters, err = newClusterSet(o.ClusterNames, o.ClusterSelector); err != nil {
		return c, err
	}
	if len(o.Images) == 0 && o.Replicas == nil && len(o.Env) == 0 && len(o.Labels) == 0 &&
		len(o.Annotations) == 0 && len(o.JSONPatch) == 0 {
		return c, errors.New("changes nothing — set at least one of images, replicas, env, labels, annotations or jsonPatch")
	}
	for _, m := range manifests {
		if m.matches(o.Target) {
			c.targets = append(c.targets, m.index)
		}
	}
	if len(c.targets) == 0 {
		if o.Target == nil {
			return c, errors.New("the template has no manifests to change")
		}
		return c, fmt.Errorf("%s matches no manifest of the template — check its apiVersion, kind, namespace and name against the template's manifests", targetString(o.Target))
	}
	targeted := make([]manifest, len(c.targets))
	for i, t := range c.targets {
		targeted[i] = manifests[t]
	}
	if err := checkContainerChanges(o, targeted); err != nil {
		return c, err
	}
	if o.Replicas != nil {
		if *o.Replicas < 0 {
			return c, fmt.Errorf("replicas %d is negative — use 0 or more", *o.Replicas)
		}
		if !slices.ContainsFunc(targeted, manifest.hasReplicas) {
			return c, fmt.Errorf("replicas: %s with spec.replicas (Deployment, StatefulSet, ReplicaSet, or any object that sets spec.replicas) — fix the target or drop replicas", noneMatches(o.Target))
		}
	}
	if c.patch, err = compilePatch(o.JSONPatch); err != nil {
		return c, err
	}
	return c, nil
}

// checkContainerChanges checks images and env against the targeted
// manifests: each must reach some container, and a named container must
// exist in one of them.
func checkContainerChanges(o workv1alpha1.ClusterOverride, targeted []manifest) error {
	if len(o.Images) == 0 && len(o.Env) == 0 {
		return nil
	}
	var names []string
	withPods := false
	for _, m := range targeted {
		if m.hasContainers() {
			withPods = true
			names = append(names, containerNames(m)...)
		}
	}
	if !withPods {
		return fmt.Errorf("images and env: %s with containers (Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet, ReplicationController, Job, CronJob) — fix the target", noneMatches(o.Target))
	}
	known := func(field string, container string) error {
		if container == "" || slices.Contains(names, container) {
			return nil
		}
		return fmt.Errorf("%s: no container named %q in the targeted manifests (they have %s) — fix the container name or leave it empty for every container", field, container, strings.Join(names, ", "))
	}
	for i, im := range o.Images {
		field := fmt.Sprintf("images[%d]", i)
		if (im.Image == "") == (im.Tag == "") {
			return fmt.Errorf("%s: set exactly one of image and tag", field)
		}
		if err := known(field, im.Container); err != nil {
			return err
		}
	}
	for i, e := range o.Env {
		field := fmt.Sprintf("env[%d]", i)
		if e.Name == "" {
			return fmt.Errorf("%s: name is empty — name the variable", field)
		}
		if err := known(field, e.Container); err != nil {
			return err
		}
	}
	return nil
}

// targetsManifest says whether the override targets template manifest i.
func (o *override) targetsManifest(i int) bool { return slices.Contains(o.targets, i) }

// apply changes one manifest: typed changes first, then the JSON patch.
// Each typed change touches only the manifests it applies to.
func (o *override) apply(w *working, m manifest) error {
	if err := o.applyTyped(w, m); err != nil {
		return err
	}
	if len(o.patch) == 0 {
		return nil
	}
	doc, err := w.bytes()
	if err != nil {
		return err
	}
	if doc, err = applyPatch(doc, o.patch); err != nil {
		return err
	}
	w.setBytes(doc)
	return nil
}

// applyTyped applies images, env, replicas, labels and annotations.
func (o *override) applyTyped(w *working, m manifest) error {
	s := o.src
	if len(s.Images) == 0 && len(s.Env) == 0 && s.Replicas == nil && len(s.Labels) == 0 && len(s.Annotations) == 0 {
		return nil
	}
	obj, err := w.object()
	if err != nil {
		return err
	}
	if m.hasContainers() {
		for i, im := range s.Images {
			if err := applyImage(obj, m.kind, im); err != nil {
				return fmt.Errorf("images[%d]: %w", i, err)
			}
		}
		for i, e := range s.Env {
			if err := applyEnv(obj, m.kind, e); err != nil {
				return fmt.Errorf("env[%d]: %w", i, err)
			}
		}
	}
	if s.Replicas != nil && m.hasReplicas() {
		if err := setReplicas(obj, int64(*s.Replicas)); err != nil {
			return fmt.Errorf("replicas: %w", err)
		}
	}
	for field, values := range map[string]map[string]string{"labels": s.Labels, "annotations": s.Annotations} {
		if len(values) == 0 {
			continue
		}
		meta, err := nestedMap(obj, true, "metadata", field)
		if err != nil {
			return fmt.Errorf("%s: %w", field, err)
		}
		for k, v := range values {
			meta[k] = v
		}
	}
	return nil
}

// setReplicas sets spec.replicas.
func setReplicas(obj map[string]any, n int64) error {
	spec, err := nestedMap(obj, true, "spec")
	if err != nil {
		return err
	}
	spec["replicas"] = json.Number(strconv.FormatInt(n, 10))
	return nil
}
