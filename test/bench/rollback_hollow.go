package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// neverReadyTag is the image tag of a release that never comes up on a
// hollow cluster: a Deployment whose containers run an image of this tag is
// reported with none of its replicas ready or available (its status
// feedback, for a healthCheck to read) and Degraded, as the work agent
// reports a Deployment whose Pods never start under a condition rule for
// Degraded. Every other image comes up, as reportRolledOut says.
const neverReadyTag = ":never-ready"

// reportNeverReady rewrites the status the simulator gave work for each of
// its Deployments that runs a neverReadyTag image: no replica ready or
// available, the manifest Degraded, and the work Degraded for its
// generation, as the work agent rolls its manifests' conditions up.
func reportNeverReady(work *workv1.ManifestWork) {
	var degraded []string
	for i := range work.Status.ResourceStatus.Manifests {
		ms := &work.Status.ResourceStatus.Manifests[i]
		rm := ms.ResourceMeta
		if rm.Group != "apps" || rm.Kind != "Deployment" || int(rm.Ordinal) >= len(work.Spec.Workload.Manifests) {
			continue
		}
		image := neverReadyImage(work.Spec.Workload.Manifests[rm.Ordinal].Raw)
		if image == "" {
			continue
		}
		var replicas int64 = 1
		for j := range ms.StatusFeedback.Values {
			v := &ms.StatusFeedback.Values[j]
			switch v.Name {
			case "Replicas":
				replicas = ptr.Deref(v.Value.Integer, 1)
			case "ReadyReplicas", "AvailableReplicas":
				v.Value = workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To[int64](0)}
			}
		}
		msg := fmt.Sprintf("Deployment %s/%s: 0 of %d replicas available: image %s never became ready", rm.Namespace, rm.Name, replicas, image)
		meta.SetStatusCondition(&ms.Conditions, metav1.Condition{Type: workv1.ManifestDegraded, Status: metav1.ConditionTrue,
			Reason: "PodsNeverReady", Message: msg, ObservedGeneration: work.Generation})
		degraded = append(degraded, fmt.Sprintf("manifest %d: %s", rm.Ordinal, msg))
	}
	if len(degraded) == 0 {
		return
	}
	meta.SetStatusCondition(&work.Status.Conditions, metav1.Condition{Type: workv1.WorkDegraded, Status: metav1.ConditionTrue,
		Reason: workv1.ReasonManifestsDegraded, ObservedGeneration: work.Generation,
		Message: fmt.Sprintf("%d of %d manifests are degraded; %s", len(degraded), len(work.Spec.Workload.Manifests), degraded[0])})
}

// neverReadyImage is the first image of a Deployment's containers that has
// neverReadyTag, or "".
func neverReadyImage(raw []byte) string {
	var d struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Image string `json:"image"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if json.Unmarshal(raw, &d) != nil {
		return ""
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if strings.HasSuffix(c.Image, neverReadyTag) {
			return c.Image
		}
	}
	return ""
}
