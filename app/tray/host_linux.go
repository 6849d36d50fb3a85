//go:build tray && linux

package tray

/*
#cgo pkg-config: x11 gtk+-3.0
#include <stdio.h>
#include <stdlib.h>
#include <X11/Xlib.h>
#include <gtk/gtk.h>

// sb_xembed_tray: 1 when an XEmbed system tray owns the selection of the
// default screen, 0 when none does, -1 without an X display.
static int sb_xembed_tray(void) {
	Display *d = XOpenDisplay(NULL);
	if (d == NULL) return -1;
	char name[64];
	snprintf(name, sizeof name, "_NET_SYSTEM_TRAY_S%d", DefaultScreen(d));
	Atom a = XInternAtom(d, name, False);
	Window owner = XGetSelectionOwner(d, a);
	XCloseDisplay(d);
	return owner != None;
}

// The clipboard belongs to GTK's main loop: set it from there.
static gboolean sb_set_clipboard(gpointer data) {
	GtkClipboard *c = gtk_clipboard_get(GDK_SELECTION_CLIPBOARD);
	gtk_clipboard_set_text(c, (const char *)data, -1);
	gtk_clipboard_store(c);
	free(data);
	return FALSE;
}

static void sb_copy(char *text) { g_idle_add(sb_set_clipboard, text); }
*/
import "C"

import (
	"errors"
	"os"

	"github.com/godbus/dbus/v5"
)

// hostProblem says why the icon would not show, or "" when a tray host is
// there: a StatusNotifierWatcher on the session bus (KDE, GNOME with the
// AppIndicator extension, waybar...) or an XEmbed tray on the X display
// (trayer, xfce4-panel, ...), which libayatana-appindicator falls back to.
func hostProblem() string {
	if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
		return "no display (neither $DISPLAY nor $WAYLAND_DISPLAY is set)"
	}
	if sniWatcher() {
		return ""
	}
	if os.Getenv("DISPLAY") != "" {
		switch C.sb_xembed_tray() {
		case 1:
			return ""
		case -1:
			return "cannot open the X display " + os.Getenv("DISPLAY")
		}
	}
	return "no StatusNotifierWatcher on the session bus and no XEmbed system tray on the display"
}

func sniWatcher() bool {
	conn, err := dbus.SessionBusPrivate()
	if err != nil {
		return false
	}
	defer conn.Close()
	if err := conn.Auth(nil); err != nil {
		return false
	}
	if err := conn.Hello(); err != nil {
		return false
	}
	var has bool
	err = conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, "org.kde.StatusNotifierWatcher").Store(&has)
	return err == nil && has
}

// copyText puts text on the clipboard (GTK keeps serving it while the tray
// runs).
func copyText(text string) error {
	if text == "" {
		return errors.New("nothing to copy")
	}
	C.sb_copy(C.CString(text))
	return nil
}
