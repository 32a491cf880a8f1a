"""A tray host for the window test: the StatusNotifierWatcher that desktop panels run (KDE,
GNOME's AppIndicator extension, waybar, ...), on the session bus named by the environment.
libayatana-appindicator registers Tandem's tray icon with it; this host then reads the icon's
menu over DBusMenu and clicks items the way a panel does when the user clicks them.

Protocol (line based): it prints `{"labels": [...]}` once the icon has registered, then for each
line `click LABEL` on stdin it sends the click and prints `{"clicked": LABEL, "toggle": N}` (the
item's check state just before the click; -1 when it has none), and for `layout` it prints
`{"labels": [...], "toggles": {...}}`. Run with Debian's /usr/bin/python3 (python3-gi)."""
import json, sys, threading, time
from gi.repository import Gio, GLib

WATCHER_XML = """<node><interface name="org.kde.StatusNotifierWatcher">
<method name="RegisterStatusNotifierItem"><arg type="s" direction="in"/></method>
<method name="RegisterStatusNotifierHost"><arg type="s" direction="in"/></method>
<property name="RegisteredStatusNotifierItems" type="as" access="read"/>
<property name="IsStatusNotifierHostRegistered" type="b" access="read"/>
<property name="ProtocolVersion" type="i" access="read"/>
<signal name="StatusNotifierItemRegistered"><arg type="s"/></signal>
<signal name="StatusNotifierHostRegistered"/>
</interface></node>"""

bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
items = []  # (bus name, object path)


def on_call(conn, sender, path, iface, method, params, inv):
    if method == "RegisterStatusNotifierItem":
        arg = params.unpack()[0]
        # Items pass either their object path (ayatana) or a bus name (then the path is fixed).
        items.append((sender, arg) if arg.startswith("/") else (arg, "/StatusNotifierItem"))
        conn.emit_signal(None, path, iface, "StatusNotifierItemRegistered", GLib.Variant("(s)", (arg,)))
    inv.return_value(None)


def on_get(conn, sender, path, iface, prop):
    return {"RegisteredStatusNotifierItems": GLib.Variant("as", [f"{n}{p}" for n, p in items]),
            "IsStatusNotifierHostRegistered": GLib.Variant("b", True),
            "ProtocolVersion": GLib.Variant("i", 0)}[prop]


node = Gio.DBusNodeInfo.new_for_xml(WATCHER_XML)
bus.register_object("/StatusNotifierWatcher", node.interfaces[0], on_call, on_get, None)
Gio.bus_own_name_on_connection(bus, "org.kde.StatusNotifierWatcher", Gio.BusNameOwnerFlags.NONE, None, None)


def call(name, path, iface, method, args, reply):
    return bus.call_sync(name, path, iface, method, args, GLib.VariantType(reply) if reply else None,
                         Gio.DBusCallFlags.NONE, 5000, None).unpack()


def menu():
    name, path = items[-1]
    menu_path = call(name, path, "org.freedesktop.DBus.Properties", "Get",
                     GLib.Variant("(ss)", ("org.kde.StatusNotifierItem", "Menu")), "(v)")[0]
    _, (_, _, children) = call(name, menu_path, "com.canonical.dbusmenu", "GetLayout",
                               GLib.Variant("(iias)", (0, -1, [])), "(u(ia{sv}av))")
    entries = {c[1].get("label", "").replace("_", ""): (c[0], c[1].get("toggle-state", -1))
               for c in children if c[1].get("type") != "separator"}
    return name, menu_path, entries


def serve():
    end = time.time() + 60
    while not items and time.time() < end:
        time.sleep(0.1)
    if not items:
        print(json.dumps({"error": "no tray icon registered"}), flush=True)
        return
    time.sleep(0.5)  # the menu is exported right after the icon registers
    print(json.dumps({"labels": list(menu()[2])}), flush=True)
    for line in sys.stdin:
        cmd, _, label = line.strip().partition(" ")
        name, menu_path, entries = menu()
        if cmd == "layout":
            print(json.dumps({"labels": list(entries), "toggles": {k: v[1] for k, v in entries.items()}}), flush=True)
        elif cmd == "click" and label in entries:
            ident, toggle = entries[label]
            call(name, menu_path, "com.canonical.dbusmenu", "Event",
                 GLib.Variant("(isvu)", (ident, "clicked", GLib.Variant("i", 0), int(time.time()))), None)
            print(json.dumps({"clicked": label, "toggle": toggle}), flush=True)
        else:
            print(json.dumps({"error": f"unknown command or item: {line.strip()}"}), flush=True)
    loop.quit()


loop = GLib.MainLoop()
threading.Thread(target=serve, daemon=True).start()
loop.run()
