package tui

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/rivo/tview"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// The commands view lists the upper-layer protocols' commands: each
// NVMe-oF command and each RPC-over-RDMA call, with its completion or
// reply and the data transfers the analysis tied to it. It draws what
// decode's NVMe-oF and RPC-over-RDMA analysis computed for each packet
// (the same matching -z nvme,srt and -z rpc,srt count): a command's row is
// keyed by its frame, which the completion, the reply and every data
// packet name (NVMeCommandInfo.Frame, RPCCallInfo.Frame).

// ulpCommand is one row: an NVMe-oF command or an RPC call.
type ulpCommand struct {
	proto  string // "NVMe" or "RPC"
	conv   uint32
	frame  uint32 // the command's (the call's) frame
	reply  uint32 // the completion's (the reply's), 0 when none was seen
	qid    int    // NVMe queue id, -1 when not known
	id     string // NVMe cid, RPC xid
	name   string // "Read", "Fabrics Connect", "NFSv3 READ"
	nsid   uint32
	hasLBA bool
	slba   uint64
	blocks uint32
	bytes  uint32
	status string
	failed bool // the completion or reply says the command failed
	lat    time.Duration
	data   []uint32 // the frames of its data transfers, in order
	// op is the row of the model's -z ...,srt table its completion was
	// counted in (the zero opKey when none was): the latency histogram's
	// opcode.
	op opKey
}

// cmdCollector builds the rows from the packets, in frame order.
type cmdCollector struct {
	rows  []*ulpCommand
	index map[uint32]*ulpCommand // by command frame
	smb2  map[smb2Key]*ulpCommand
	nvme  int
	rpc   int
	other int // iSER tasks and SMB2 requests
	// The model's -z nvme,srt, rpc,srt, iscsi,srt and smb2,srt tables
	// over every connection and per connection: the latency histograms'
	// numbers.
	all    srtSet
	byConv map[uint32]*srtSet
	// aliases maps the id of a connection another absorbed (the analysis
	// first saw it as two) to that other's.
	aliases map[uint32]uint32
}

// newCmdCollector returns a collector over the connections cs.
func newCmdCollector(cs []decode.Conversation) *cmdCollector {
	c := &cmdCollector{index: map[uint32]*ulpCommand{}, byConv: map[uint32]*srtSet{}, aliases: map[uint32]uint32{}}
	for i := range cs {
		for _, a := range cs[i].Aliases {
			c.aliases[a] = cs[i].ID
		}
	}
	return c
}

// canon is the id of the connection conv is part of.
func (c *cmdCollector) canon(conv uint32) uint32 {
	if id, ok := c.aliases[conv]; ok {
		return id
	}
	return conv
}

// conv is the tables of connection id (empty when it had no command).
func (c *cmdCollector) conv(id uint32) *srtSet {
	if s := c.byConv[id]; s != nil {
		return s
	}
	return &srtSet{}
}

// finish takes the histograms' rows out of the tables once every packet
// is in.
func (c *cmdCollector) finish() {
	c.all.finish()
	for _, s := range c.byConv {
		s.finish()
	}
}

// row returns the row of the command sent at frame, a new one if need be.
func (c *cmdCollector) row(proto string, conv, frame uint32) *ulpCommand {
	if r := c.index[frame]; r != nil {
		return r
	}
	r := c.insert(proto, conv, frame)
	c.index[frame] = r
	return r
}

// insert adds a row for a command sent at frame.
func (c *cmdCollector) insert(proto string, conv, frame uint32) *ulpCommand {
	r := &ulpCommand{proto: proto, conv: conv, frame: frame, qid: -1}
	// Rows are created in the order of the packets that name them: a
	// command the analysis recognised at its completion (a capture that
	// starts mid-stream) comes before the commands sent after it.
	i := sort.Search(len(c.rows), func(i int) bool { return c.rows[i].frame > frame })
	c.rows = append(c.rows, nil)
	copy(c.rows[i+1:], c.rows[i:])
	c.rows[i] = r
	switch proto {
	case "NVMe":
		c.nvme++
	case "RPC":
		c.rpc++
	default:
		c.other++
	}
	return r
}

func (c *cmdCollector) add(p *decode.Packet) {
	a := &p.Analysis
	if a.NVMe != nil || a.RPCRDMA != nil || a.ISER != nil || a.SMBDirect != nil {
		id := c.canon(a.Conv)
		s := c.byConv[id]
		if s == nil {
			s = &srtSet{}
			c.byConv[id] = s
		}
		s.add(p)
		c.all.add(p)
	}
	if n := p.Analysis.NVMe; n != nil && n.HasCmd && n.Cmd.Frame != 0 {
		c.addNVMe(p, n)
	}
	if r := p.Analysis.RPCRDMA; r != nil && r.HasCall && r.Call.Frame != 0 {
		c.addRPC(p, r)
	}
	if i := p.Analysis.ISER; i != nil && i.HasTask && i.Task.Frame != 0 {
		c.addISER(p, i)
	}
	if s := p.Analysis.SMBDirect; s != nil {
		c.addSMB2(p, s)
	}
}

func (c *cmdCollector) addISER(p *decode.Packet, pk *decode.ISERPacket) {
	t := &pk.Task
	r := c.row("iSER", p.Analysis.Conv, t.Frame)
	if r.name == "" {
		r.id, r.name, r.bytes = fmt.Sprintf("0x%08x", t.ITT), t.Name(), t.EDTL
		r.hasLBA, r.slba, r.blocks = t.HasRange, t.LBA, t.Blocks
	}
	switch {
	case pk.Kind == decode.ISERData:
		r.data = append(r.data, uint32(p.Number))
	case pk.Kind == decode.ISERMessage && pk.HasPDU && uint32(p.Number) != t.Frame:
		if resp, _ := t.Opcode.Response(); resp != pk.PDU.Opcode {
			return // a Data-In, an R2T: a part of the task, not its end
		}
		r.reply, r.lat = uint32(p.Number), pk.Latency
		r.op = iscsiOpOf(p)
		r.failed = !decode.ISCSIResponseOK(&pk.PDU)
		r.status = "ok"
		switch {
		case pk.PDU.Opcode == layers.ISCSISCSIResponse:
			r.status = pk.PDU.Status().String()
		case r.failed:
			r.status = "failed"
		}
	}
}

// addSMB2 adds the SMB2 requests an SMB Direct message starts (each of a
// compound a row of its own) and the final responses matched with them.
func (c *cmdCollector) addSMB2(p *decode.Packet, s *decode.SMBDirectPacket) {
	for i := range s.NSMB2 {
		h := &s.SMB2[i]
		frame := uint32(p.Number)
		if h.Response() {
			if !s.Matched[i] {
				continue
			}
			frame = s.Req[i].Frame
		}
		r := c.smb2Row(p.Analysis.Conv, frame, h.MessageID)
		if r.name == "" {
			r.id, r.name = strconv.FormatUint(h.MessageID, 10), h.Command.String()
		}
		if h.Response() && !h.Interim() {
			r.reply, r.lat = uint32(p.Number), s.Latency[i]
			r.op = smb2Op(h.Command)
			r.failed = h.Failed()
			r.status = fmt.Sprintf("0x%08x", h.Status)
			if n, ok := layers.NTStatusName(h.Status); ok {
				r.status = n
			}
		}
	}
}

// smb2Row is row for SMB2, whose compounds put several requests in one
// frame: keyed by frame and MessageId.
func (c *cmdCollector) smb2Row(conv, frame uint32, msgID uint64) *ulpCommand {
	k := smb2Key{frame, msgID}
	if r := c.smb2[k]; r != nil {
		return r
	}
	r := c.insert("SMB2", conv, frame)
	if c.smb2 == nil {
		c.smb2 = map[smb2Key]*ulpCommand{}
	}
	c.smb2[k] = r
	return r
}

type smb2Key struct {
	frame uint32
	msgID uint64
}

func (c *cmdCollector) addNVMe(p *decode.Packet, n *decode.NVMePacket) {
	r := c.row("NVMe", p.Analysis.Conv, n.Cmd.Frame)
	if r.name == "" {
		ci := &n.Cmd
		r.id, r.name, r.nsid, r.bytes = strconv.Itoa(int(ci.CID)), ci.Name(), ci.NSID, ci.Bytes
		r.slba, r.blocks = ci.SLBA, ci.Blocks
		r.hasLBA = ci.Blocks != 0 // an I/O Read, Write or Write Zeroes
	}
	if n.HasQID {
		r.qid = int(n.QID)
	}
	switch n.Kind {
	case decode.NVMeCompletion:
		r.reply, r.lat = uint32(p.Number), n.Latency
		r.op = nvmeOpOf(p)
		r.status, r.failed = n.CQE.Status.String(), !n.CQE.Status.OK()
	case decode.NVMeData:
		r.data = append(r.data, uint32(p.Number))
	}
}

func (c *cmdCollector) addRPC(p *decode.Packet, pk *decode.RPCRDMAPacket) {
	r := c.row("RPC", p.Analysis.Conv, pk.Call.Frame)
	if r.name == "" {
		ci := &pk.Call
		r.id = fmt.Sprintf("0x%08x", ci.XID)
		r.name = decode.RPCProcLabel(ci)
		if r.name == "RPC" {
			r.name = ci.ProgName() + " " + ci.ProcName()
		}
		for _, op := range ci.Ops[:ci.NOps] {
			r.name += " " + op.String()
		}
	}
	switch {
	case pk.Kind == decode.RPCRDMAChunk:
		r.data = append(r.data, uint32(p.Number))
	case pk.Hdr.Proc == layers.RPCRDMAError:
		r.reply, r.lat = uint32(p.Number), pk.Latency
		r.status, r.failed = "RDMA_ERROR "+pk.Hdr.ErrCode.String(), p.Analysis.Has(decode.FindRPCError)
	case pk.HasRPC && pk.RPC.Type == layers.RPCReply:
		r.reply, r.lat = uint32(p.Number), pk.Latency
		r.op = rpcOpOf(p)
		r.status = rpcStatus(pk)
		// Whether the call failed is the analysis's verdict (denied, or
		// accepted but not executed: its expert finding, and an error in
		// -z rpc,srt); an NFS procedure's own error status is a result.
		r.failed = p.Analysis.Has(decode.FindRPCError)
	}
}

// rpcStatus names a reply's outcome as the summary line does: the reject
// or accept state when the call was not executed, else the NFS status
// when the reply has one.
func rpcStatus(pk *decode.RPCRDMAPacket) string {
	m := &pk.RPC
	switch {
	case m.ReplyStat == layers.RPCDenied:
		return "denied " + m.RejectStat.String()
	case m.AcceptStat != layers.RPCSuccess:
		return m.AcceptStat.String()
	case pk.HasNFSStatus:
		return layers.NFS3Status(pk.NFSStatus).String()
	}
	return m.ReplyStat.String()
}

// cmdColumns are the view's columns; a column no row fills is left out
// (an NFS capture has no LBA).
var cmdColumns = []struct {
	name    string
	right   bool
	numeric bool
}{
	{"Proto", false, false}, {"Conn", true, true}, {"Queue", true, true}, {"ID", true, false},
	{"Command", false, false}, {"NSID", true, true}, {"LBA", true, true}, {"Blocks", true, true},
	{"Bytes", true, true}, {"Status", false, false}, {"Latency µs", true, true},
	{"Cmd", true, true}, {"Cpl", true, true}, {"Data frames", false, true},
}

// cmdLatency is the index of the latency column, which S sorts by when no
// column is chosen: the slowest commands first.
var cmdLatency = func() int {
	for j, c := range cmdColumns {
		if c.name == "Latency µs" {
			return j
		}
	}
	panic("tui: no latency column")
}()

// cells are r's cells and their numeric sort keys, by column.
func (r *ulpCommand) cells() ([]string, []float64) {
	num := func(v uint64) string { return strconv.FormatUint(v, 10) }
	c := make([]string, len(cmdColumns))
	k := make([]float64, len(cmdColumns))
	c[0] = r.proto
	c[1], k[1] = num(uint64(r.conv)), float64(r.conv)
	if r.qid >= 0 {
		c[2], k[2] = strconv.Itoa(r.qid), float64(r.qid)
	}
	c[3], c[4] = r.id, r.name
	if r.nsid != 0 {
		c[5], k[5] = num(uint64(r.nsid)), float64(r.nsid)
	}
	if r.hasLBA {
		c[6], k[6] = num(r.slba), float64(r.slba)
		c[7], k[7] = num(uint64(r.blocks)), float64(r.blocks)
	}
	if r.bytes != 0 {
		c[8], k[8] = num(uint64(r.bytes)), float64(r.bytes)
	}
	c[9] = r.status
	k[cmdLatency] = -1 // no completion: before the fastest
	if r.reply != 0 {
		c[cmdLatency] = micros(r.lat)
		k[cmdLatency] = float64(r.lat)
	} else if r.proto == "NVMe" {
		c[9] = "(no completion)"
	} else {
		c[9] = "(no reply)"
	}
	c[11], k[11] = num(uint64(r.frame)), float64(r.frame)
	if r.reply != 0 {
		c[12], k[12] = num(uint64(r.reply)), float64(r.reply)
	}
	if n := len(r.data); n > 0 {
		c[13] = frameRange(r.data)
		k[13] = float64(n)
	}
	return c, k
}

// frameRange says which frames a command's data took: "5-8", or with
// other frames among them "5-12 (6 frames)".
func frameRange(fr []uint32) string {
	first, last := fr[0], fr[len(fr)-1]
	if first == last {
		return strconv.Itoa(int(first))
	}
	s := strconv.Itoa(int(first)) + "-" + strconv.Itoa(int(last))
	if int(last-first)+1 != len(fr) {
		s += " (" + strconv.Itoa(len(fr)) + " frames)"
	}
	return s
}

// cmdRow is a row as the table shows it.
type cmdRow struct {
	cmd   *ulpCommand
	cells []string
	keys  []float64
}

// commandsView is the commands view: a title and the table.
type commandsView struct {
	*tview.Flex
	u       *UI
	title   *tview.TextView
	table   *tview.Table
	rows    []cmdRow
	nvme    int
	rpc     int
	other   int
	shown   []int // the columns shown, by index into cmdColumns
	sortCol int   // -1: by command frame
	desc    bool
	// What the rows are of: the model and how many of its packets.
	m       *Model
	packets int
	busy    bool
	cancel  context.CancelFunc
	col     *cmdCollector // the last collection, nil before the first
	// only, when set, narrows the rows to a histogram bucket's commands,
	// which onlyTitle names.
	only      func(*ulpCommand) bool
	onlyTitle string
}

func newCommandsView(u *UI) *commandsView {
	v := &commandsView{u: u, title: tview.NewTextView().SetWrap(false),
		table: tview.NewTable().SetSelectable(true, false).SetFixed(1, 0), sortCol: -1}
	v.table.SetSelectedStyle(u.theme.selected)
	v.table.SetSelectedFunc(func(int, int) { u.commandJump(false) })
	v.Flex = tview.NewFlex().SetDirection(tview.FlexRow).AddItem(v.title, 1, 0, false).AddItem(v.table, 0, 1, true)
	return v
}

// showCommands opens the view on every command (a list a histogram's
// bucket narrowed is widened again); the commands are collected in the
// background from the spool when the capture has grown (or changed) since
// they last were.
func (u *UI) showCommands() {
	v := u.commands
	u.showView(viewCommands)
	if v.only != nil {
		v.only, v.onlyTitle = nil, ""
		if v.col != nil {
			v.update(v.col)
		}
	}
	u.collectCommands()
}

// collectCommands starts collecting the commands unless they are up to
// date or being collected; the commands view and the latency histograms
// are updated when they are.
func (u *UI) collectCommands() {
	v := u.commands
	total := u.m.Status().Packets
	if v.m == u.m && (v.packets == total || v.busy) {
		return
	}
	if v.cancel != nil {
		v.cancel()
	}
	ctx, cancel := context.WithCancel(u.ctx)
	m := u.m
	v.cancel, v.m, v.packets, v.busy = cancel, m, total, true
	v.setTitle()
	u.opLat.fill()
	cs := m.Conversations()
	go func() {
		col := newCmdCollector(cs)
		err := m.Scan(ctx, total, func(p *decode.Packet) bool { col.add(p); return true })
		if err == nil {
			col.finish()
		}
		if err != nil {
			if ctx.Err() != nil {
				return // a newer scan, or the program's end, took over
			}
			// A read error: said, and U tries again.
			u.queue(func() {
				if v.m == m && v.packets == total {
					v.busy, v.packets = false, -1
					v.title.SetText("Commands: " + err.Error())
					u.opLat.fill()
				}
			})
			return
		}
		u.queue(func() {
			if v.m != m || v.packets != total {
				return
			}
			v.busy = false
			v.update(col)
			u.opLat.fill()
		})
	}()
}

func (v *commandsView) setTitle() {
	if v.busy {
		v.title.SetText(fmt.Sprintf("Commands: reading %d packets...", v.packets))
		return
	}
	others := ""
	if v.other > 0 {
		others = fmt.Sprintf(", %d iSER/SMB2", v.other)
	}
	if v.only != nil {
		v.title.SetText(fmt.Sprintf("Commands of %s: %d (enter: frame, c: completion, t/T: histograms, U: all)",
			v.onlyTitle, len(v.rows)))
		return
	}
	v.title.SetText(fmt.Sprintf("Commands: %d NVMe-oF, %d RPC-over-RDMA%s (enter: frame, c: completion, a: connection, s/S: sort, t/T: latency histograms)",
		v.nvme, v.rpc, others))
}

// update shows the rows col collected (those of v.only when it is set).
func (v *commandsView) update(col *cmdCollector) {
	v.col = col
	v.nvme, v.rpc, v.other = col.nvme, col.rpc, col.other
	v.rows = v.rows[:0]
	filled := make([]bool, len(cmdColumns))
	for _, c := range col.rows {
		if v.only != nil && !v.only(c) {
			continue
		}
		cells, keys := c.cells()
		for j, s := range cells {
			filled[j] = filled[j] || s != ""
		}
		v.rows = append(v.rows, cmdRow{cmd: c, cells: cells, keys: keys})
	}
	v.shown = v.shown[:0]
	for j := range cmdColumns {
		if filled[j] || len(v.rows) == 0 {
			v.shown = append(v.shown, j)
		}
	}
	v.setTitle()
	v.sort()
	v.fill(nil)
}

func (v *commandsView) selected() *ulpCommand {
	r, _ := v.table.GetSelection()
	if r < 1 || r > len(v.rows) {
		return nil
	}
	return v.rows[r-1].cmd
}

func (v *commandsView) sort() {
	col, desc := v.sortCol, v.desc
	sort.SliceStable(v.rows, func(i, j int) bool {
		a, b := &v.rows[i], &v.rows[j]
		if col < 0 {
			return a.cmd.frame < b.cmd.frame
		}
		if a.keys[col] == b.keys[col] && a.cells[col] == b.cells[col] {
			return false
		}
		var less bool
		if cmdColumns[col].numeric {
			less = a.keys[col] < b.keys[col]
		} else {
			less = a.cells[col] < b.cells[col]
		}
		return less != desc
	})
}

// fill draws the rows, keeping keep (or the first row) selected.
func (v *commandsView) fill(keep *ulpCommand) {
	t := v.table
	t.Clear()
	for k, j := range v.shown {
		h := cmdColumns[j].name
		if j == v.sortCol {
			h += map[bool]string{false: "▲", true: "▼"}[v.desc]
		}
		cell := tview.NewTableCell(h).SetStyle(v.u.theme.header).SetSelectable(false)
		if cmdColumns[j].right {
			cell.SetAlign(tview.AlignRight)
		}
		t.SetCell(0, k, cell)
	}
	sel := 1
	for i, r := range v.rows {
		st := v.u.theme.normal
		switch {
		case r.cmd.failed:
			st = v.u.theme.bad
		case r.cmd.reply == 0:
			st = v.u.theme.warn
		}
		for k, j := range v.shown {
			cell := tview.NewTableCell(r.cells[j]).SetStyle(st)
			if cmdColumns[j].right {
				cell.SetAlign(tview.AlignRight)
			}
			t.SetCell(i+1, k, cell)
		}
		if r.cmd == keep {
			sel = i + 1
		}
	}
	if len(v.rows) == 0 && !v.busy {
		t.SetCell(1, 0, tview.NewTableCell("(no NVMe-oF command or RPC call found)").SetSelectable(false))
	}
	// A table drawn empty follows its end (tview): start at the top.
	t.SetOffset(0, 0)
	t.Select(sel, 0)
}

// sortNext sorts by the next column shown (after the last: by frame).
func (v *commandsView) sortNext() {
	i := -1
	for k, j := range v.shown {
		if j == v.sortCol {
			i = k
		}
	}
	if i+1 < len(v.shown) {
		v.sortCol = v.shown[i+1]
	} else {
		v.sortCol = -1
	}
	keep := v.selected()
	v.sort()
	v.fill(keep)
}

// reverse reverses the sort; with none chosen, the slowest commands first.
func (v *commandsView) reverse() {
	if v.sortCol < 0 {
		v.sortCol = cmdLatency
	}
	v.desc = !v.desc
	keep := v.selected()
	v.sort()
	v.fill(keep)
}

// commandJump goes to the selected command's frame, or its completion's
// (reply's).
func (u *UI) commandJump(completion bool) {
	c := u.commands.selected()
	switch {
	case c == nil:
	case !completion:
		u.jumpFrame(int(c.frame))
	case c.reply == 0:
		u.note(fmt.Sprintf("the command of frame %d has no completion in the capture", c.frame))
	default:
		u.jumpFrame(int(c.reply))
	}
}

// commandConv filters the packet list to the selected command's connection.
func (u *UI) commandConv() {
	if c := u.commands.selected(); c != nil && c.conv != 0 {
		cv := u.convOf(c.conv)
		u.applyFilter(convFilter(&cv))
	}
}
