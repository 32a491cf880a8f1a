"""A tiny GTK window that offers one file for drag-and-drop (text/uri-list), so the window
test can drop a real file on Tandem with xdotool. Usage: dragsource.py FILE X Y"""
import sys
import gi
gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk, GLib, Gtk

path, x, y = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
uri = GLib.filename_to_uri(path, None)
win = Gtk.Window(title="tandem-drag-source")
win.set_default_size(160, 80)
win.move(x, y)
button = Gtk.Button(label="drag me")
button.drag_source_set(Gdk.ModifierType.BUTTON1_MASK, [Gtk.TargetEntry.new("text/uri-list", 0, 0)], Gdk.DragAction.COPY)
button.connect("drag-data-get", lambda w, ctx, data, info, t: data.set_uris([uri]))
win.add(button)
win.connect("destroy", Gtk.main_quit)
win.show_all()
Gtk.main()
