package console

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// lockedBuffer is a Buffer that klog may write from any goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Run gives controller-runtime a logger (klog's) before the informers
// log through it: unset, controller-runtime prints "log.SetLogger(...)
// was never called" and a stack trace on the first log line 30 s after
// start, which every console printed.
func TestRunSetsControllerRuntimeLogger(t *testing.T) {
	var out lockedBuffer
	klog.LogToStderr(false)
	klog.SetOutput(&out)
	t.Cleanup(func() { klog.SetOutput(io.Discard); klog.LogToStderr(true) })

	// A hub that refuses connections: Run stops at its first request.
	err := Run(context.Background(), Options{
		Config: &rest.Config{Host: "https://127.0.0.1:1"}, Scheme: testScheme, Hub: "https://127.0.0.1:1",
		Out: io.Discard, Notef: func(string, ...any) {},
	})
	if err == nil {
		t.Fatal("Run against a hub that refuses connections returned no error")
	}
	ctrllog.Log.WithName("cache").Info("a controller-runtime log line")
	klog.Flush()
	if !strings.Contains(out.String(), "a controller-runtime log line") {
		t.Fatalf("controller-runtime's log line did not reach klog; klog got %q", out.String())
	}
}
