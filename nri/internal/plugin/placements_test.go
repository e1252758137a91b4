package plugin

import (
	"io"
	"log/slog"
	"testing"

	"topologyd.local/nri/internal/config"
	pb "topologyd.local/nri/internal/topologydv1"
)

func TestAnOlderListingDoesNotTakeBackAnAdmission(t *testing.T) {
	p := New(config.Default(), slog.New(slog.NewTextHandler(io.Discard, nil)), nil, nil)
	p.putAdmission("u", &pb.AdmitResponse{Admitted: true, StateGeneration: 7,
		Containers: []*pb.ContainerAllocation{{Name: "app", Cpus: "1"}}})
	p.replace(&pb.ListAllocationsResponse{StateGeneration: 6}, false)
	if _, ok := p.placementOf("u", "app"); !ok {
		t.Error("a listing from before the admission dropped it")
	}
	p.replace(&pb.ListAllocationsResponse{StateGeneration: 8}, false)
	if _, ok := p.placementOf("u", "app"); ok {
		t.Error("a newer listing without the pod (released since) kept it")
	}
	p.putAdmission("v", &pb.AdmitResponse{Admitted: true, StateGeneration: 9,
		Containers: []*pb.ContainerAllocation{{Name: "app", Cpus: "1"}}})
	p.replace(&pb.ListAllocationsResponse{StateGeneration: 3}, true)
	if _, ok := p.placementOf("v", "app"); ok {
		t.Error("the first listing of a new stream is topologyd's state whatever came before")
	}
}
