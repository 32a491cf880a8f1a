#!/usr/bin/python3
"""The memory peer for bench/app_memory.sh: WebKitGTK alone, as the system gives it to any app on
Linux — one GTK window with one WebKit2 (4.1) web view on a near-empty page, accelerated
compositing off like Tandem's default. No Tandem code at all: what remains is the floor the
"idle memory < 120 MB" target has to fit above. Runs until killed."""
import os
os.environ.setdefault("WEBKIT_DISABLE_COMPOSITING_MODE", "1")
import gi
gi.require_version("Gtk", "3.0")
gi.require_version("WebKit2", "4.1")
from gi.repository import Gtk, WebKit2  # noqa: E402

win = Gtk.Window(title="bare webview")
win.set_default_size(1000, 700)
view = WebKit2.WebView()
view.load_html("<!doctype html><title>bare</title><p>Hello</p>", "about:blank")
win.add(view)
win.connect("destroy", Gtk.main_quit)
win.show_all()
Gtk.main()
