package devcluster

import (
	"context"
	"fmt"
	"os"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	nodefast "sigs.k8s.io/kwok/kustomize/stage/node/fast"
	nodeheartbeat "sigs.k8s.io/kwok/kustomize/stage/node/heartbeat-with-lease"
	podfast "sigs.k8s.io/kwok/kustomize/stage/pod/fast"
	"sigs.k8s.io/kwok/pkg/apis/internalversion"
	"sigs.k8s.io/kwok/pkg/config"
	kwokcontrollers "sigs.k8s.io/kwok/pkg/kwok/controllers"
	kwoklog "sigs.k8s.io/kwok/pkg/log"
	kwokclient "sigs.k8s.io/kwok/pkg/utils/client"
)

// kwokAnnotation marks the nodes that kwok plays the kubelet of.
const kwokAnnotation = "kwok.x-k8s.io/node"

// kwokID holds the nodes' leases. It is the same on every start, so that a
// restarted dev cluster takes its nodes back at once instead of waiting for
// the leases of its previous life to expire.
const kwokID = "flotilla-dev-cluster"

// nodeLeaseSeconds is the nodes' lease duration, a kubelet's default.
const nodeLeaseSeconds = 40

// podCIDR is where kwok takes the Pods' IP addresses from.
const podCIDR = "10.244.0.0/16"

// nodeIP is the InternalIP that kwok reports for every node.
const nodeIP = "10.240.0.1"

// stages are kwok's default lifecycle: nodes become Ready at once and keep
// a lease, Pods become Running and Ready at once, complete when their
// restart policy says so, and go away when deleted.
func stages() (map[internalversion.StageResourceRef][]*internalversion.Stage, error) {
	out := map[internalversion.StageResourceRef][]*internalversion.Stage{}
	for _, raw := range []string{
		nodefast.DefaultNodeInit,
		nodeheartbeat.DefaultNodeHeartbeatWithLease,
		podfast.DefaultPodReady,
		podfast.DefaultPodComplete,
		podfast.DefaultPodDelete,
	} {
		s, err := config.UnmarshalWithType[*internalversion.Stage](raw)
		if err != nil {
			return nil, fmt.Errorf("kwok stage: %w", err)
		}
		out[s.Spec.ResourceRef] = append(out[s.Spec.ResourceRef], s)
	}
	return out, nil
}

// runKwok starts kwok's node and pod controllers for the nodes annotated
// with kwokAnnotation, as kwok-controller does. They stop when ctx ends.
func runKwok(ctx context.Context, kubeconfig string) error {
	cs, err := kwokclient.NewClientset("", kubeconfig)
	if err != nil {
		return err
	}
	restConfig, err := cs.ToRESTConfig()
	if err != nil {
		return err
	}
	dynamicClient, err := cs.ToDynamicClient()
	if err != nil {
		return err
	}
	restMapper, err := cs.ToRESTMapper()
	if err != nil {
		return err
	}
	restClient, err := rest.RESTClientFor(restConfig)
	if err != nil {
		return err
	}
	typedClient, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return err
	}
	localStages, err := stages()
	if err != nil {
		return err
	}
	ctr, err := kwokcontrollers.NewController(kwokcontrollers.Config{
		Clock:                             clock.RealClock{},
		DynamicClient:                     dynamicClient,
		RESTClient:                        restClient,
		RESTMapper:                        restMapper,
		ImpersonatingDynamicClient:        cs.ToImpersonatingDynamicClient(),
		ImpersonatingTypedClient:          cs.ToImpersonatingTypedClient(),
		TypedClient:                       typedClient,
		ManageNodesWithAnnotationSelector: kwokAnnotation + "=fake",
		CIDR:                              podCIDR,
		NodeIP:                            nodeIP,
		LocalStages:                       localStages,
		PodPlayStageParallelism:           4,
		NodePlayStageParallelism:          4,
		NodeLeaseParallelism:              4,
		NodeLeaseDurationSeconds:          nodeLeaseSeconds,
		PodsOnNodeSyncParallelism:         1,
		EnablePodsOnNodeSyncListPager:     true,
		ID:                                kwokID,
	})
	if err != nil {
		return fmt.Errorf("kwok: %w", err)
	}
	// kwok logs through a logger of its own; only its warnings matter here.
	ctx = kwoklog.NewContext(ctx, kwoklog.NewLogger(os.Stderr, kwoklog.LevelWarn))
	if err := ctr.Start(ctx); err != nil {
		return fmt.Errorf("kwok: %w", err)
	}
	return nil
}
