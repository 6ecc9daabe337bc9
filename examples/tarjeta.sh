#!/bin/sh
# A card payment, as JSON lines: an authorisation that holds 80.00 for seven days, its
# capture of 64.90 (the rest is released), and a second authorisation released unused.
# expira must be in the future and at most 30 days ahead, so it is written from today.
expira=$(date -u -d '+7 days' +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u -v+7d +%Y-%m-%dT%H:%M:%SZ)
cuenta=ES7620770024003102575766
cat <<LINES
{"id":"aut-1","tipo":"retencion","cuenta":"$cuenta","importe":"80.00","moneda":"EUR","expira":"$expira","concepto":"Gasolinera"}
{"id":"cap-1","tipo":"captura","cuenta":"$cuenta","retencion":"aut-1","importe":"64.90"}
{"id":"aut-2","tipo":"retencion","cuenta":"$cuenta","importe":"120.00","moneda":"EUR","expira":"$expira","concepto":"Hotel"}
{"id":"lib-2","tipo":"liberacion","cuenta":"$cuenta","retencion":"aut-2"}
LINES
