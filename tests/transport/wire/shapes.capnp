# Bodies of shapes no layer's schema has yet (unions, groups, lists of lists,
# enums in lists), for the decoder's generic checks (body_plan_test.cc).
@0xc9ffd9f610c643d5;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("rigel::transport::test_wire");

using T = import "/transport/wire/envelope.capnp";

enum Color {
  red @0;
  green @1;
}

struct Shapes {
  choice :union {
    none @0 :Void;
    keys @1 :T.KeysRef;
    rows @2 :T.RowsRef;
  }
  group :group {
    color @3 :Color;
    bytes @4 :T.BytesRef;
  }
  nested @5 :List(List(T.KeysRef));
  colors @6 :List(Color);
  defaultGreen @7 :Color = green;
}
