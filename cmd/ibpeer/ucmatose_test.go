package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/internal/peer/peertest"
	"github.com/ibwire/ibwire/internal/peer/ucmatose"
)

const (
	ucmServerOut = "cmatose: starting server\ninitiating data transfers\ncompleting sends\nreceiving data transfers\n" +
		"data transfers complete\ncmatose: disconnecting\ndisconnected\ntest complete\nreturn status 0\n"
	ucmClientOut = "cmatose: starting client\ncmatose: connecting\nreceiving data transfers\nsending replies\n" +
		"data transfers complete\ntest complete\nreturn status 0\n"
)

func TestUcmatoseLoopback(t *testing.T) {
	tests := []struct {
		name       string
		serverArgs []string // nil: ibpeer serve --cm
		clientArgs []string
		serverOut  string
		clientOut  string
	}{
		{name: "defaults", serverArgs: []string{}, clientArgs: []string{}, serverOut: ucmServerOut, clientOut: ucmClientOut},
		{name: "3 connections, 50 messages of 3000 bytes", serverArgs: []string{"-c", "3", "-C", "50", "-S", "3000"},
			clientArgs: []string{"-c3", "-C50", "-S3000"}, serverOut: ucmServerOut, clientOut: ucmClientOut},
		{name: "no messages", serverArgs: []string{"-C", "0"}, clientArgs: []string{"-C", "0"},
			serverOut: "cmatose: starting server\ncmatose: disconnecting\ndisconnected\ntest complete\nreturn status 0\n",
			clientOut: "cmatose: starting client\ncmatose: connecting\ntest complete\nreturn status 0\n"},
		{name: "ibpeer serve --cm", serverOut: ucmServerOut, clientOut: ucmClientOut},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			noLeak(t)
			srv, cli := fmt.Sprintf("127.79.%d.1", i), fmt.Sprintf("127.79.%d.2", i)
			port := 7471 + i
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var so peertest.Buffer
			done := make(chan int, 1)
			if tc.serverArgs == nil {
				// ibpeer serve --cm is a process of its own here: wait
				// for its socket by retrying the client.
				go func() {
					var se bytes.Buffer
					done <- run([]string{"serve", "--bind", srv, "--cm", fmt.Sprint(port)}, &so, &se)
				}()
				time.Sleep(200 * time.Millisecond)
			} else {
				scfg, err := ucmatoseParse(append([]string{"--bind", srv, "-p", fmt.Sprint(port)}, tc.serverArgs...))
				require.NoError(t, err)
				listening := make(chan struct{})
				scfg.Listening = func() { close(listening) }
				go func() { done <- ucmatoseExit(ctx, scfg, &so, &so) }()
				<-listening
			}
			ccfg, err := ucmatoseParse(append([]string{"-b", cli, "-s", srv, "-p", fmt.Sprint(port)}, tc.clientArgs...))
			require.NoError(t, err)
			var co, ce bytes.Buffer
			require.Equal(t, exitOK, ucmatoseExit(ctx, ccfg, &co, &ce), "client: %s%s", co.String(), ce.String())
			require.Equal(t, exitOK, <-done, "server: %s", so.String())
			assert.Equal(t, tc.clientOut, co.String())
			assert.Equal(t, tc.serverOut, so.String())
		})
	}
}

func TestUcmatoseRejected(t *testing.T) {
	noLeak(t)
	// A CM answers on the server address, but not on the port: REJ 8.
	srv, cli := "127.79.50.1", "127.79.50.2"
	scfg, err := ucmatoseParse([]string{"-b", srv, "-p", "7000"})
	require.NoError(t, err)
	listening := make(chan struct{})
	scfg.Listening = func() { close(listening) }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- ucmatoseExit(ctx, scfg, &peertest.Buffer{}, &peertest.Buffer{}) }()
	<-listening
	code, out, _ := ibpeer("ucmatose", "-b", cli, "-s", srv)
	assert.Equal(t, exitError, code)
	assert.Equal(t, "cmatose: starting client\ncmatose: connecting\ncmatose: event: RDMA_CM_EVENT_REJECTED, error: 8\n"+
		"test complete\nreturn status 1\n", out)
	cancel()
	<-done
}

func TestUcmatoseParse(t *testing.T) {
	tests := []struct {
		args    []string
		want    ucmatose.Config
		wantErr string
	}{
		{args: []string{"--bind", "192.168.77.1", "-s", "192.168.77.11"},
			want: ucmatose.Config{Server: netip.MustParseAddr("192.168.77.11"), Local: netip.MustParseAddr("192.168.77.1"), Port: 7471, Connections: 1, Count: 10, Size: 100}},
		{args: []string{"-b", "10.0.0.1", "-c", "4", "-C5", "-S", "0", "-p", "9"},
			want: ucmatose.Config{Local: netip.MustParseAddr("10.0.0.1"), Port: 9, Connections: 4, Size: 0}},
		{args: []string{"-s", "10.0.0.1"}, wantErr: "give -b or --bind IP"},
		{args: []string{"-b", "10.0.0.1", "-P", "ib"}, wantErr: "only the tcp port space"},
		{args: []string{"-b", "10.0.0.1", "-c", "0"}, wantErr: "-c 0"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			got, err := ucmatoseParse(tc.args)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestUcmatoseHelpComplete(t *testing.T) {
	ucmatoseFlags().VisitAll(func(f *flag.Flag) {
		spelled := "-" + f.Name + " "
		if len(f.Name) > 1 {
			spelled = "--" + f.Name
		}
		assert.Contains(t, ucmatoseUsage, spelled, "flag %s", f.Name)
	})
	code, out, _ := ibpeer("serve", "--cm", "1", "-h")
	assert.Equal(t, exitOK, code)
	assert.Equal(t, cmServeUsage, out)
	_, out, _ = ibpeer("-h")
	assert.Contains(t, out, "ucmatose")
	_, out, _ = ibpeer("serve", "-h")
	assert.Contains(t, out, "--cm PORT")
}
