package tui

import (
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// theme is every style the viewer draws with. The monochrome theme (NO_COLOR,
// --color=never, TERM=dumb) keeps the same information with attributes only:
// reverse for selection, bold for headers and problems, underline for
// warnings, and text markers where colour alone would carry meaning.
type theme struct {
	mono       bool
	normal     tcell.Style
	header     tcell.Style
	tab        tcell.Style
	tabActive  tcell.Style
	status     tcell.Style
	selected   tcell.Style
	highlight  tcell.Style // bytes of the selected field
	cursor     tcell.Style // the hex cursor
	bad        tcell.Style // errors: malformed, bad CRC, error findings
	warn       tcell.Style // NAKs, RNR NAKs, warnings
	congestion tcell.Style // CNPs, FECN/BECN, ECN CE
	good       tcell.Style
	filterOK   tcell.Style
	filterBad  tcell.Style
	filterOff  tcell.Style
}

func newTheme(mono bool) theme {
	d := tcell.StyleDefault
	if mono {
		return theme{mono: true, normal: d, header: d.Bold(true), tab: d, tabActive: d.Reverse(true),
			status: d.Reverse(true), selected: d.Reverse(true), highlight: d.Reverse(true), cursor: d.Underline(true),
			bad: d.Bold(true), warn: d.Underline(true), congestion: d.Italic(true), good: d,
			filterOK: d, filterBad: d.Bold(true), filterOff: d}
	}
	return theme{normal: d, header: d.Bold(true).Foreground(tcell.ColorYellow),
		tab: d.Foreground(tcell.ColorSilver), tabActive: d.Background(tcell.ColorTeal).Foreground(tcell.ColorWhite).Bold(true),
		status:     d.Background(tcell.ColorNavy).Foreground(tcell.ColorWhite),
		selected:   d.Background(tcell.ColorTeal).Foreground(tcell.ColorWhite),
		highlight:  d.Background(tcell.ColorOlive).Foreground(tcell.ColorBlack),
		cursor:     d.Reverse(true),
		bad:        d.Foreground(tcell.ColorRed).Bold(true),
		warn:       d.Foreground(tcell.ColorYellow),
		congestion: d.Foreground(tcell.ColorFuchsia),
		good:       d.Foreground(tcell.ColorGreen),
		filterOK:   d.Background(tcell.ColorDarkGreen).Foreground(tcell.ColorWhite),
		filterBad:  d.Background(tcell.ColorMaroon).Foreground(tcell.ColorWhite),
		filterOff:  d.Background(tcell.ColorDefault)}
}

// apply sets tview's global styles so that primitives we do not style
// ourselves follow the theme.
func (t theme) apply() {
	if t.mono {
		tview.Styles = tview.Theme{
			PrimitiveBackgroundColor:    tcell.ColorDefault,
			ContrastBackgroundColor:     tcell.ColorDefault,
			MoreContrastBackgroundColor: tcell.ColorDefault,
			BorderColor:                 tcell.ColorDefault,
			TitleColor:                  tcell.ColorDefault,
			GraphicsColor:               tcell.ColorDefault,
			PrimaryTextColor:            tcell.ColorDefault,
			SecondaryTextColor:          tcell.ColorDefault,
			TertiaryTextColor:           tcell.ColorDefault,
			InverseTextColor:            tcell.ColorDefault,
			ContrastSecondaryTextColor:  tcell.ColorDefault,
		}
		return
	}
	tview.Styles.PrimitiveBackgroundColor = tcell.ColorDefault
}
