#include "transport/internal/body_plan.h"

#include <capnp/dynamic.h>
#include <capnp/schema.capnp.h>
#include <fmt/format.h>

#include <cstring>
#include <memory>
#include <unordered_map>
#include <vector>

#include "common/mutex.h"
#include "transport/message_types.h"

namespace rigel::transport::internal {

// What a pointer (or a list's element) holds, as far as the checks care.
enum class Elem : uint8_t {
  kOther,  // numbers, bools, void, any pointer: nothing to read beyond the
           // pointer itself (a list of them is checked by its typed read)
  kEnum,
  kStruct,
  kKeys,
  kRows,
  kBytes,
  kText,
  kData,
  kList,
};

struct ValuePlan {
  Elem elem = Elem::kOther;
  uint16_t enumerants = 0;                 // kEnum: values the schema names
  const StructPlan* sub = nullptr;         // kStruct
  std::unique_ptr<const ValuePlan> inner;  // kList: its element
  capnp::ListSchema list;                  // kList: its schema (for the typed read)
};

constexpr uint16_t kNoDiscriminant = capnp::schema::Field::NO_DISCRIMINANT;

struct FieldPlan {
  Where where;
  uint16_t discriminant = kNoDiscriminant;  // a union member's value
  const StructPlan* group = nullptr;        // a group: its fields, in this struct
  bool is_enum = false;                     // an enum in the data section:
  uint32_t enum_offset = 0;                 //   its uint16 index
  uint16_t enum_default = 0;                //   stored XOR this
  uint16_t enumerants = 0;
  bool is_pointer = false;  // a pointer field:
  uint32_t pointer = 0;     //   its index in the pointer section
  ValuePlan value;
};

struct StructPlan {
  const char* name = "";
  bool has_union = false;
  uint32_t discriminant_offset = 0;  // uint16 index in the data section
  std::vector<FieldPlan> fields;     // those that need a check
};

std::string Name(const Where& w) { return fmt::format("{}.{}", w.owner, w.field); }

namespace {

struct Plans {
  Mutex mu;
  // Never erased: plans point at each other and callers keep pointers.
  std::unordered_map<uint64_t, std::unique_ptr<StructPlan>> by_id RIGEL_GUARDED_BY(mu);
};

Plans& ThePlans() {
  static Plans* p = new Plans;
  return *p;
}

const StructPlan* Build(Plans& plans, capnp::StructSchema schema) RIGEL_REQUIRES(plans.mu);

ValuePlan PlanValue(Plans& plans, capnp::Type t) RIGEL_REQUIRES(plans.mu) {
  using W = capnp::schema::Type::Which;
  ValuePlan v;
  switch (t.which()) {
    case W::TEXT:
      v.elem = Elem::kText;
      break;
    case W::DATA:
      v.elem = Elem::kData;
      break;
    case W::ENUM:
      v.elem = Elem::kEnum;
      v.enumerants = static_cast<uint16_t>(t.asEnum().getEnumerants().size());
      break;
    case W::STRUCT: {
      const uint64_t id = t.asStruct().getProto().getId();
      if (id == TypeId<wire::KeysRef>()) {
        v.elem = Elem::kKeys;
      } else if (id == TypeId<wire::RowsRef>()) {
        v.elem = Elem::kRows;
      } else if (id == TypeId<wire::BytesRef>()) {
        v.elem = Elem::kBytes;
      } else {
        v.elem = Elem::kStruct;
        v.sub = Build(plans, t.asStruct());
      }
      break;
    }
    case W::LIST:
      v.elem = Elem::kList;
      v.list = t.asList();
      v.inner = std::make_unique<const ValuePlan>(PlanValue(plans, t.asList().getElementType()));
      break;
    default:
      break;
  }
  return v;
}

void PlanFields(Plans& plans, capnp::StructSchema schema, StructPlan& out)
    RIGEL_REQUIRES(plans.mu) {
  for (capnp::StructSchema::Field f : schema.getFields()) {
    auto proto = f.getProto();
    FieldPlan fp;
    fp.where = Where{out.name, proto.getName().cStr()};
    fp.discriminant = proto.getDiscriminantValue();
    if (proto.isGroup()) {
      // A group's fields live in this struct; its plan walks the same one.
      fp.group = Build(plans, f.getType().asStruct());
      out.fields.push_back(std::move(fp));
      continue;
    }
    auto slot = proto.getSlot();
    capnp::Type t = f.getType();
    if (t.isEnum()) {
      fp.is_enum = true;
      fp.enum_offset = slot.getOffset();
      fp.enum_default = slot.getDefaultValue().getEnum();
      fp.enumerants = static_cast<uint16_t>(t.asEnum().getEnumerants().size());
      out.fields.push_back(std::move(fp));
    } else if (t.isStruct() || t.isList() || t.isText() || t.isData()) {
      fp.is_pointer = true;
      fp.pointer = slot.getOffset();
      fp.value = PlanValue(plans, t);
      out.fields.push_back(std::move(fp));
    }
    // Numbers and bools: any bits are a value.
  }
}

const StructPlan* Build(Plans& plans, capnp::StructSchema schema) {
  const uint64_t id = schema.getProto().getId();
  auto it = plans.by_id.find(id);
  if (it != plans.by_id.end()) return it->second.get();
  // Entered before its fields are planned: a struct that contains itself
  // (through a list) finds its own plan.
  auto owned = std::make_unique<StructPlan>();
  StructPlan* plan = owned.get();
  plans.by_id.emplace(id, std::move(owned));
  plan->name = schema.getShortDisplayName().cStr();
  auto s = schema.getProto().getStruct();
  plan->has_union = s.getDiscriminantCount() > 0;
  plan->discriminant_offset = s.getDiscriminantOffset();
  PlanFields(plans, schema, *plan);
  return plan;
}

// A uint16 of the data section; beyond its end (an older writer), 0.
uint16_t ReadU16(kj::ArrayPtr<const capnp::byte> data, uint32_t index) {
  if (size_t{index} * 2 + 2 > data.size()) return 0;
  uint16_t v;
  std::memcpy(&v, data.begin() + size_t{index} * 2, 2);
  return v;
}

void WalkStruct(capnp::AnyStruct::Reader s, const StructPlan& p, RefVisitor& v);

// Reports a list element that is a Ref (of kind `kind`) to `v`.
void VisitRef(Elem kind, capnp::DynamicStruct::Reader s, const Where& w, RefVisitor& v) {
  switch (kind) {
    case Elem::kKeys:
      return v.Keys(s.as<wire::KeysRef>(), w);
    case Elem::kRows:
      return v.Rows(s.as<wire::RowsRef>(), w);
    default:
      return v.Bytes(s.as<wire::BytesRef>(), w);
  }
}

// A list read with its schema's type (what a typed getter checks: pointer
// kind and element size), then its elements by `e`. Elements that are numbers
// or bools need no more than that read.
void WalkList(capnp::DynamicList::Reader list, const ValuePlan& e, const Where& w, RefVisitor& v) {
  switch (e.elem) {
    case Elem::kEnum:
      for (capnp::DynamicValue::Reader x : list) {
        const uint16_t raw = x.as<capnp::DynamicEnum>().getRaw();
        if (raw >= e.enumerants) return v.Fail(fmt::format("{}: unknown value {}", Name(w), raw));
      }
      break;
    case Elem::kStruct:
      for (capnp::DynamicValue::Reader x : list) {
        WalkStruct(x.as<capnp::DynamicStruct>().as<capnp::AnyStruct>(), *e.sub, v);
      }
      break;
    case Elem::kKeys:
    case Elem::kRows:
    case Elem::kBytes:
      for (capnp::DynamicValue::Reader x : list)
        VisitRef(e.elem, x.as<capnp::DynamicStruct>(), w, v);
      break;
    case Elem::kText:
      for (capnp::DynamicValue::Reader x : list) (void)x.as<capnp::Text>();
      break;
    case Elem::kData:
      for (capnp::DynamicValue::Reader x : list) (void)x.as<capnp::Data>();
      break;
    case Elem::kList:
      for (capnp::DynamicValue::Reader x : list) {
        WalkList(x.as<capnp::DynamicList>(), *e.inner, w, v);
      }
      break;
    default:
      break;
  }
}

void WalkPointer(capnp::AnyPointer::Reader ptr, const ValuePlan& p, const Where& w, RefVisitor& v) {
  switch (p.elem) {
    case Elem::kStruct:
      WalkStruct(ptr.getAs<capnp::AnyStruct>(), *p.sub, v);
      break;
    case Elem::kKeys:
      v.Keys(ptr.getAs<wire::KeysRef>(), w);
      break;
    case Elem::kRows:
      v.Rows(ptr.getAs<wire::RowsRef>(), w);
      break;
    case Elem::kBytes:
      v.Bytes(ptr.getAs<wire::BytesRef>(), w);
      break;
    case Elem::kText:
      (void)ptr.getAs<capnp::Text>();
      break;
    case Elem::kData:
      (void)ptr.getAs<capnp::Data>();
      break;
    case Elem::kList:
      WalkList(ptr.getAs<capnp::DynamicList>(p.list), *p.inner, w, v);
      break;
    default:
      break;
  }
}

void WalkStruct(capnp::AnyStruct::Reader s, const StructPlan& p, RefVisitor& v) {
  const auto data = s.getDataSection();
  const auto ptrs = s.getPointerSection();
  const uint16_t active = p.has_union ? ReadU16(data, p.discriminant_offset) : 0;
  for (const FieldPlan& f : p.fields) {
    if (f.discriminant != kNoDiscriminant && f.discriminant != active) continue;
    if (f.group != nullptr) {
      WalkStruct(s, *f.group, v);
    } else if (f.is_enum) {
      const uint16_t x = ReadU16(data, f.enum_offset) ^ f.enum_default;
      if (x >= f.enumerants) v.Fail(fmt::format("{}: unknown value {}", Name(f.where), x));
    } else if (f.is_pointer) {
      // A pointer beyond the section (an older writer) reads as null.
      WalkPointer(f.pointer < ptrs.size() ? ptrs[f.pointer] : capnp::AnyPointer::Reader(), f.value,
                  f.where, v);
    }
  }
}

}  // namespace

const StructPlan* PlanOf(capnp::StructSchema schema) {
  Plans& plans = ThePlans();
  MutexLock lock(&plans.mu);
  return Build(plans, schema);
}

void Walk(capnp::AnyStruct::Reader body, const StructPlan& plan, RefVisitor& v) {
  WalkStruct(body, plan, v);
}

}  // namespace rigel::transport::internal
