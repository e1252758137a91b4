// noop-plugin: an NRI plugin that subscribes to the events topologyd-nri handles and changes
// nothing. bench/nri_latency.cc registers it on a third containerd to measure the floor the
// NRI hop itself puts under any plugin's creation time.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/stub"
)

type noop struct{}

func (noop) Configure(context.Context, string, string, string) (stub.EventMask, error) {
	fmt.Fprintln(os.Stderr, "msg=registered")
	return 0, nil
}
func (noop) RunPodSandbox(context.Context, *api.PodSandbox) error    { return nil }
func (noop) StopPodSandbox(context.Context, *api.PodSandbox) error   { return nil }
func (noop) RemovePodSandbox(context.Context, *api.PodSandbox) error { return nil }
func (noop) CreateContainer(context.Context, *api.PodSandbox, *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	return nil, nil, nil
}
func (noop) PostStartContainer(context.Context, *api.PodSandbox, *api.Container) error { return nil }
func (noop) UpdateContainer(context.Context, *api.PodSandbox, *api.Container, *api.LinuxResources) ([]*api.ContainerUpdate, error) {
	return nil, nil
}
func (noop) StopContainer(context.Context, *api.PodSandbox, *api.Container) ([]*api.ContainerUpdate, error) {
	return nil, nil
}
func (noop) RemoveContainer(context.Context, *api.PodSandbox, *api.Container) error { return nil }

func main() {
	socket := flag.String("nri-socket", "", "the runtime's NRI socket")
	flag.Parse()
	s, err := stub.New(noop{}, stub.WithPluginName("noop"), stub.WithPluginIdx("10"), stub.WithSocketPath(*socket))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := s.Run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
