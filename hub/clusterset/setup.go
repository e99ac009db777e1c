package clusterset

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Setup adds the cluster set controllers to the hub manager.
func Setup(mgr manager.Manager) error {
	sets := &SetReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(recorderName)}
	if err := sets.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up the ManagedClusterSet controller: %w", err)
	}
	bindings := &BindingReconciler{Client: mgr.GetClient()}
	if err := bindings.SetupWithManager(context.Background(), mgr); err != nil {
		return fmt.Errorf("set up the ManagedClusterSetBinding controller: %w", err)
	}
	return nil
}
