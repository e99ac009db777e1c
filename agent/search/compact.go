package search

import (
	"fmt"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
)

// compactMeta is what every indexed object keeps of its metadata.
func compactMeta(r searchv1alpha1.SearchResource, m metav1.Object) searchv1alpha1.Object {
	o := searchv1alpha1.Object{
		Group: r.Group, Version: r.Version, Resource: r.Resource, Kind: r.Kind,
		Namespace: m.GetNamespace(), Name: m.GetName(), UID: m.GetUID(), ResourceVersion: m.GetResourceVersion(),
		CreationTimestamp: m.GetCreationTimestamp(), Labels: m.GetLabels(),
	}
	if c := metav1.GetControllerOfNoCopy(m); c != nil {
		o.Owner = &searchv1alpha1.Owner{Kind: c.Kind, Name: c.Name, UID: c.UID}
	}
	return o
}

// compactObject is o reduced to what the index keeps of a resource r
// that is not metadata-only.
func compactObject(r searchv1alpha1.SearchResource, u *unstructured.Unstructured) searchv1alpha1.Object {
	o := compactMeta(r, u)
	obj := u.Object
	o.Conditions = conditions(obj)
	switch {
	case r.Group == "" && r.Kind == "Pod":
		o.Images = images(obj, "spec")
		o.Status = podStatus(u)
		o.Fields = selected(obj, "spec.nodeName", "status.podIP", "status.phase")
	case r.Group == "apps" && r.Kind == "Deployment":
		o.Images = images(obj, "spec", "template", "spec")
		o.Status = deploymentStatus(o.Conditions)
		o.Fields = selected(obj, "spec.replicas", "status.readyReplicas", "status.availableReplicas")
	case r.Group == "apps" && (r.Kind == "StatefulSet" || r.Kind == "DaemonSet" || r.Kind == "ReplicaSet"):
		o.Images = images(obj, "spec", "template", "spec")
		o.Status = replicasStatus(r.Kind, obj)
		o.Fields = selected(obj, "spec.replicas", "status.readyReplicas", "status.numberReady", "status.desiredNumberScheduled")
	case r.Group == "batch" && r.Kind == "Job":
		o.Images = images(obj, "spec", "template", "spec")
		o.Status = jobStatus(o.Conditions)
		o.Fields = selected(obj, "status.succeeded", "status.failed", "status.active")
	case r.Group == "batch" && r.Kind == "CronJob":
		o.Images = images(obj, "spec", "jobTemplate", "spec", "template", "spec")
		o.Fields = selected(obj, "spec.schedule")
	case r.Group == "" && r.Kind == "Service":
		o.Fields = selected(obj, "spec.type", "spec.clusterIP")
	case r.Group == "" && r.Kind == "Node":
		o.Status = nodeStatus(o.Conditions)
		o.Fields = selected(obj, "status.nodeInfo.kubeletVersion", "spec.unschedulable")
	case r.Group == "" && (r.Kind == "Namespace" || r.Kind == "PersistentVolumeClaim" || r.Kind == "PersistentVolume"):
		o.Status, _, _ = unstructured.NestedString(obj, "status", "phase")
	default:
		o.Images = images(obj, "spec", "template", "spec")
		o.Status = genericStatus(obj, o.Conditions)
	}
	return o
}

// images are the container images of the pod spec at path, init
// containers first.
func images(obj map[string]any, path ...string) []string {
	var out []string
	for _, field := range []string{"initContainers", "containers"} {
		cs, _, _ := unstructured.NestedSlice(obj, append(path, field)...)
		for _, c := range cs {
			if m, ok := c.(map[string]any); ok {
				if img, ok := m["image"].(string); ok && img != "" {
					out = append(out, img)
				}
			}
		}
	}
	return out
}

// conditions are status.conditions, type to status.
func conditions(obj map[string]any) map[string]string {
	cs, _, _ := unstructured.NestedSlice(obj, "status", "conditions")
	var out map[string]string
	for _, c := range cs {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		t, _ := m["type"].(string)
		s, _ := m["status"].(string)
		if t == "" {
			continue
		}
		if out == nil {
			out = make(map[string]string, len(cs))
		}
		out[t] = s
	}
	return out
}

// selected are the values of the dotted paths that obj has, as strings.
func selected(obj map[string]any, paths ...string) map[string]string {
	var out map[string]string
	for _, p := range paths {
		v, found, err := unstructured.NestedFieldNoCopy(obj, strings.Split(p, ".")...)
		if !found || err != nil || v == nil {
			continue
		}
		var s string
		switch v := v.(type) {
		case string:
			s = v
		case int64:
			s = strconv.FormatInt(v, 10)
		case float64:
			s = strconv.FormatFloat(v, 'f', -1, 64)
		case bool:
			s = strconv.FormatBool(v)
		default:
			continue
		}
		if out == nil {
			out = make(map[string]string, len(paths))
		}
		out[p] = s
	}
	return out
}

// podStatus is the status kubectl prints for a Pod: the reason a
// container waits or terminated (CrashLoopBackOff, ImagePullBackOff,
// Error, Completed) before the phase, init containers first, and
// Terminating once it is being deleted.
func podStatus(u *unstructured.Unstructured) string {
	obj := u.Object
	phase, _, _ := unstructured.NestedString(obj, "status", "phase")
	reason := phase
	if r, _, _ := unstructured.NestedString(obj, "status", "reason"); r != "" {
		reason = r
	}
	initStatuses, _, _ := unstructured.NestedSlice(obj, "status", "initContainerStatuses")
	for _, c := range initStatuses {
		state := containerState(c)
		if state.terminated && state.exitCode == 0 {
			continue
		}
		switch {
		case state.terminated && state.reason != "":
			return "Init:" + state.reason
		case state.terminated:
			return "Init:ExitCode:" + strconv.FormatInt(state.exitCode, 10)
		case state.waiting && state.reason != "" && state.reason != "PodInitializing":
			return "Init:" + state.reason
		default:
			return "Init:" + phaseOr(phase, "Pending")
		}
	}
	statuses, _, _ := unstructured.NestedSlice(obj, "status", "containerStatuses")
	running := false
	for i := len(statuses) - 1; i >= 0; i-- {
		state := containerState(statuses[i])
		switch {
		case state.waiting && state.reason != "":
			reason = state.reason
		case state.terminated && state.reason != "":
			reason = state.reason
		case state.terminated:
			reason = "ExitCode:" + strconv.FormatInt(state.exitCode, 10)
		case state.running && state.ready:
			running = true
		}
	}
	if reason == "Completed" && running {
		reason = "Running"
	}
	if u.GetDeletionTimestamp() != nil {
		reason = "Terminating"
	}
	return reason
}

func phaseOr(phase, def string) string {
	if phase == "" {
		return def
	}
	return phase
}

type state struct {
	waiting, running, terminated, ready bool
	reason                              string
	exitCode                            int64
}

func containerState(c any) state {
	m, ok := c.(map[string]any)
	if !ok {
		return state{}
	}
	var s state
	s.ready, _ = m["ready"].(bool)
	st, _ := m["state"].(map[string]any)
	if w, ok := st["waiting"].(map[string]any); ok {
		s.waiting = true
		s.reason, _ = w["reason"].(string)
	}
	if t, ok := st["terminated"].(map[string]any); ok {
		s.terminated = true
		s.reason, _ = t["reason"].(string)
		switch v := t["exitCode"].(type) {
		case int64:
			s.exitCode = v
		case float64:
			s.exitCode = int64(v)
		}
	}
	if _, ok := st["running"]; ok {
		s.running = true
	}
	return s
}

// deploymentStatus is Available while the Deployment has its minimum
// available, else Progressing while it rolls out, else Unavailable.
func deploymentStatus(c map[string]string) string {
	switch {
	case c["Available"] == "True":
		return "Available"
	case c["ReplicaFailure"] == "True":
		return "ReplicaFailure"
	case c["Progressing"] == "True":
		return "Progressing"
	case c["Progressing"] == "False":
		return "Failed"
	}
	return "Unavailable"
}

// replicasStatus is Ready when every wanted replica is ready, else
// Progressing.
func replicasStatus(kind string, obj map[string]any) string {
	want, ready := "spec.replicas", "status.readyReplicas"
	if kind == "DaemonSet" {
		want, ready = "status.desiredNumberScheduled", "status.numberReady"
	}
	w, _, _ := unstructured.NestedFieldNoCopy(obj, strings.Split(want, ".")...)
	r, _, _ := unstructured.NestedFieldNoCopy(obj, strings.Split(ready, ".")...)
	wn, rn := number(w, kind != "DaemonSet"), number(r, false)
	if rn >= wn {
		return "Ready"
	}
	return "Progressing"
}

// number is v as an integer; an absent spec.replicas is 1.
func number(v any, defaultOne bool) int64 {
	switch v := v.(type) {
	case int64:
		return v
	case float64:
		return int64(v)
	}
	if defaultOne {
		return 1
	}
	return 0
}

func jobStatus(c map[string]string) string {
	switch {
	case c["Complete"] == "True":
		return "Complete"
	case c["Failed"] == "True":
		return "Failed"
	case c["Suspended"] == "True":
		return "Suspended"
	}
	return "Running"
}

// nodeStatus is Ready, NotReady or Unknown, as the Ready condition says.
func nodeStatus(c map[string]string) string {
	switch c["Ready"] {
	case "True":
		return "Ready"
	case "False":
		return "NotReady"
	}
	return "Unknown"
}

// genericStatus is a kind of its own's phase, or what its Ready or
// Available condition says.
func genericStatus(obj map[string]any, c map[string]string) string {
	if p, _, _ := unstructured.NestedString(obj, "status", "phase"); p != "" {
		return p
	}
	for _, t := range []string{"Ready", "Available"} {
		switch c[t] {
		case "True":
			return t
		case "False":
			return fmt.Sprintf("Not%s", t)
		}
	}
	return ""
}
