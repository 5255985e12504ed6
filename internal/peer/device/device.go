package device

import (
	"context"
	"fmt"
	"io"
	"net/netip"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/layers"
)

// Device is a device whose drops ibpeer reports on stderr.
type Device struct {
	*endpoint.Device
	stop func()
	done chan struct{}
}

// Open opens a device over w, as endpoint.NewDevice does, with drop
// reports going to stderr ("ibpeer: dropped ..."). Close closes the device
// and writes what was held back. Every ibpeer program that talks to a peer
// opens its device this way.
func Open(w endpoint.Wire, stderr io.Writer) *Device {
	rep := newDropReporter(stderr, "ibpeer")
	ctx, cancel := context.WithCancel(context.Background())
	d := &Device{
		Device: endpoint.NewDevice(w, endpoint.WithDropHandler(rep.Observe)),
		stop:   cancel,
		done:   make(chan struct{}),
	}
	go func() {
		defer close(d.done)
		rep.Run(ctx)
	}()
	return d
}

// Close closes the device, then reports the drops still held back.
func (d *Device) Close() error {
	err := d.Device.Close()
	d.stop()
	<-d.done
	return err
}

// OpenCM opens the UDP wire on local (or wireFn's, when given), a device
// that reports drops on stderr, and its connection manager; offload
// applies to the UDP wire it opens.
func OpenCM(local netip.Addr, wireFn func(netip.Addr) (endpoint.Wire, error), offload UDPOffload, cfg endpoint.CMConfig, stderr io.Writer) (*Device, *endpoint.CM, error) {
	var wire endpoint.Wire
	var err error
	if wireFn != nil {
		wire, err = wireFn(local)
	} else {
		wire, err = offload.ListenUDP(netip.AddrPortFrom(local, layers.RoCEv2Port))
	}
	if err != nil {
		return nil, nil, fmt.Errorf("RoCEv2 socket on %v: %w", local, err)
	}
	dev := Open(wire, stderr)
	cm, err := endpoint.NewCM(dev.Device, cfg)
	if err != nil {
		dev.Close()
		return nil, nil, err
	}
	return dev, cm, nil
}
