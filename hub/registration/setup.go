package registration

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// recorderName is the reporting controller of the events this package emits.
const recorderName = "flotilla-hub-registration"

// Setup adds the registration controllers to the hub manager.
func Setup(mgr manager.Manager) error {
	clusters := &ClusterReconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Scheme:    mgr.GetScheme(),
		Recorder:  mgr.GetEventRecorder(recorderName),
	}
	if err := clusters.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up the ManagedCluster registration controller: %w", err)
	}
	csrs := &CSRReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder(recorderName)}
	if err := csrs.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up the CSR approving controller: %w", err)
	}
	return nil
}
