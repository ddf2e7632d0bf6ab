SELECT ':a', "b:c", E'\':d', $$ :e $$, $t$ :f $t$, $1, x::int -- :g
/* /* :h */ */ a[1:2], a[:i], a -:j, a /:k