package craft_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/craft"
)

func TestMACControlFrames(t *testing.T) {
	src := craft.DefaultResponder.MAC
	at := craft.DefaultStart.Add(time.Millisecond)
	// The bytes tshark 4.0.17 decodes as "Class Based Flow Control [CBFC]
	// Pause", vector 0x0018 (C3, C4), C3: 65535, and as "Pause:
	// pause_time: 65535 quanta" (layers/maccontrol_test.go has the dumps).
	pfcHead := []byte{0x01, 0x80, 0xc2, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x88, 0x08, 0x01, 0x01,
		0x00, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff}
	pauseHead := []byte{0x01, 0x80, 0xc2, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x88, 0x08, 0x00, 0x01, 0xff, 0xff}

	f, err := craft.PFCFrame(src, map[int]uint16{3: 65535, 4: 0}, at)
	require.NoError(t, err)
	assert.Len(t, f.Data, 60)
	assert.Equal(t, pfcHead, f.Data[:len(pfcHead)])
	assert.Equal(t, make([]byte, 60-len(pfcHead)), f.Data[len(pfcHead):])
	assert.Equal(t, at, f.Time)
	assert.Equal(t, "PFC p3=65535 p4=0", f.Info.Note)

	f, err = craft.PauseFrame(src, 65535, at)
	require.NoError(t, err)
	assert.Equal(t, pauseHead, f.Data[:len(pauseHead)])
	assert.Equal(t, "PAUSE 65535 quanta", f.Info.Note)

	_, err = craft.PFCFrame(src, map[int]uint16{8: 1}, at)
	assert.Error(t, err)
}
