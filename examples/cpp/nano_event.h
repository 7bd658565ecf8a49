// A NanoAOD-like event of 50 fields (scalars and std::vectors, as CMS NanoAOD's Events), declared once
// in NANO_FIELDS: the struct, the writer's JSON schema and the binding of members to fields are all
// made from that list.
#ifndef NANO_EVENT_H
#define NANO_EVENT_H

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

// X(C++ type, member, ROOT type name)
#define NANO_FIELDS(X)                                                  \
  X(std::uint32_t, run, "std::uint32_t")                                \
  X(std::uint32_t, luminosityBlock, "std::uint32_t")                    \
  X(std::uint64_t, event, "std::uint64_t")                              \
  X(float, MET_pt, "float")                                             \
  X(float, MET_phi, "float")                                            \
  X(float, MET_sumEt, "float")                                          \
  X(float, PV_x, "float")                                               \
  X(float, PV_y, "float")                                               \
  X(float, PV_z, "float")                                               \
  X(std::int32_t, PV_npvs, "std::int32_t")                              \
  X(bool, HLT_IsoMu24, "bool")                                          \
  X(bool, HLT_Ele32_WPTight_Gsf, "bool")                                \
  X(float, fixedGridRhoFastjetAll, "float")                             \
  X(std::uint32_t, nMuon, "std::uint32_t")                              \
  X(std::vector<float>, Muon_pt, "std::vector<float>")                  \
  X(std::vector<float>, Muon_eta, "std::vector<float>")                 \
  X(std::vector<float>, Muon_phi, "std::vector<float>")                 \
  X(std::vector<float>, Muon_mass, "std::vector<float>")                \
  X(std::vector<std::int32_t>, Muon_charge, "std::vector<std::int32_t>") \
  X(std::vector<float>, Muon_pfRelIso04_all, "std::vector<float>")      \
  X(std::vector<float>, Muon_dxy, "std::vector<float>")                 \
  X(std::vector<float>, Muon_dz, "std::vector<float>")                  \
  X(std::vector<std::uint8_t>, Muon_tightId, "std::vector<std::uint8_t>") \
  X(std::uint32_t, nElectron, "std::uint32_t")                          \
  X(std::vector<float>, Electron_pt, "std::vector<float>")              \
  X(std::vector<float>, Electron_eta, "std::vector<float>")             \
  X(std::vector<float>, Electron_phi, "std::vector<float>")             \
  X(std::vector<float>, Electron_mass, "std::vector<float>")            \
  X(std::vector<std::int32_t>, Electron_charge, "std::vector<std::int32_t>") \
  X(std::vector<std::int32_t>, Electron_cutBased, "std::vector<std::int32_t>") \
  X(std::vector<float>, Electron_pfRelIso03_all, "std::vector<float>")  \
  X(std::uint32_t, nJet, "std::uint32_t")                               \
  X(std::vector<float>, Jet_pt, "std::vector<float>")                   \
  X(std::vector<float>, Jet_eta, "std::vector<float>")                  \
  X(std::vector<float>, Jet_phi, "std::vector<float>")                  \
  X(std::vector<float>, Jet_mass, "std::vector<float>")                 \
  X(std::vector<float>, Jet_btagDeepFlavB, "std::vector<float>")        \
  X(std::vector<std::int32_t>, Jet_jetId, "std::vector<std::int32_t>")  \
  X(std::vector<std::int32_t>, Jet_hadronFlavour, "std::vector<std::int32_t>") \
  X(std::vector<float>, Jet_area, "std::vector<float>")                 \
  X(std::vector<float>, Jet_qgl, "std::vector<float>")                  \
  X(std::uint32_t, nPhoton, "std::uint32_t")                            \
  X(std::vector<float>, Photon_pt, "std::vector<float>")                \
  X(std::vector<float>, Photon_eta, "std::vector<float>")               \
  X(std::vector<float>, Photon_phi, "std::vector<float>")               \
  X(std::vector<float>, Photon_mvaID, "std::vector<float>")             \
  X(std::uint32_t, nTau, "std::uint32_t")                               \
  X(std::vector<float>, Tau_pt, "std::vector<float>")                   \
  X(std::vector<float>, Tau_eta, "std::vector<float>")                  \
  X(std::vector<float>, Tau_phi, "std::vector<float>")

struct NanoEvent {
#define NANO_MEMBER(type, name, root) type name{};
  NANO_FIELDS(NANO_MEMBER)
#undef NANO_MEMBER
};

/// The writer's schema, {"run": "std::uint32_t", ...}.
inline std::string nano_schema_json() {
  std::string s = "{";
#define NANO_JSON(type, name, root) s += std::string(s.size() > 1 ? ", " : "") + "\"" #name "\": \"" root "\"";
  NANO_FIELDS(NANO_JSON)
#undef NANO_JSON
  return s + "}";
}

/// Binds every member of NanoEvent to its field.
template <class Binder>
void nano_bind(Binder& b) {
#define NANO_BIND(type, name, root) b.field(#name, &NanoEvent::name);
  NANO_FIELDS(NANO_BIND)
#undef NANO_BIND
}

/// A deterministic event `i`: a few muons, electrons, jets, photons and taus with smooth values.
inline void nano_make(std::uint64_t i, NanoEvent& e) {
  auto fill = [i](std::vector<float>& v, std::size_t n, float scale, float shift) {
    v.resize(n);
    for (std::size_t k = 0; k < n; k++) v[k] = scale * static_cast<float>((i * 7919 + k * 104729) % 1000) / 1000.0f + shift;
  };
  e.run = 1;
  e.luminosityBlock = static_cast<std::uint32_t>(i / 1000 + 1);
  e.event = i;
  e.MET_pt = static_cast<float>(i % 200);
  e.MET_phi = static_cast<float>(i % 628) / 100.0f - 3.14f;
  e.MET_sumEt = static_cast<float>(i % 2000) + 100.0f;
  e.PV_x = 0.01f * static_cast<float>(i % 10);
  e.PV_y = -0.01f * static_cast<float>(i % 10);
  e.PV_z = static_cast<float>(i % 30) - 15.0f;
  e.PV_npvs = static_cast<std::int32_t>(i % 60);
  e.HLT_IsoMu24 = i % 3 == 0;
  e.HLT_Ele32_WPTight_Gsf = i % 5 == 0;
  e.fixedGridRhoFastjetAll = static_cast<float>(i % 40) * 0.5f;
  std::size_t nm = i % 4, ne = (i / 4) % 3, nj = i % 8, np = (i / 2) % 3, nt = i % 2;
  e.nMuon = static_cast<std::uint32_t>(nm);
  fill(e.Muon_pt, nm, 100.0f, 3.0f);
  fill(e.Muon_eta, nm, 4.8f, -2.4f);
  fill(e.Muon_phi, nm, 6.28f, -3.14f);
  fill(e.Muon_mass, nm, 0.0f, 0.1057f);
  e.Muon_charge.assign(nm, 1);
  fill(e.Muon_pfRelIso04_all, nm, 0.5f, 0.0f);
  fill(e.Muon_dxy, nm, 0.02f, -0.01f);
  fill(e.Muon_dz, nm, 0.2f, -0.1f);
  e.Muon_tightId.assign(nm, 1);
  e.nElectron = static_cast<std::uint32_t>(ne);
  fill(e.Electron_pt, ne, 80.0f, 5.0f);
  fill(e.Electron_eta, ne, 5.0f, -2.5f);
  fill(e.Electron_phi, ne, 6.28f, -3.14f);
  fill(e.Electron_mass, ne, 0.0f, 0.000511f);
  e.Electron_charge.assign(ne, -1);
  e.Electron_cutBased.assign(ne, 3);
  fill(e.Electron_pfRelIso03_all, ne, 0.3f, 0.0f);
  e.nJet = static_cast<std::uint32_t>(nj);
  fill(e.Jet_pt, nj, 300.0f, 15.0f);
  fill(e.Jet_eta, nj, 9.4f, -4.7f);
  fill(e.Jet_phi, nj, 6.28f, -3.14f);
  fill(e.Jet_mass, nj, 30.0f, 2.0f);
  fill(e.Jet_btagDeepFlavB, nj, 1.0f, 0.0f);
  e.Jet_jetId.assign(nj, 6);
  e.Jet_hadronFlavour.assign(nj, static_cast<std::int32_t>(i % 6));
  fill(e.Jet_area, nj, 0.2f, 0.4f);
  fill(e.Jet_qgl, nj, 1.0f, 0.0f);
  e.nPhoton = static_cast<std::uint32_t>(np);
  fill(e.Photon_pt, np, 60.0f, 10.0f);
  fill(e.Photon_eta, np, 5.0f, -2.5f);
  fill(e.Photon_phi, np, 6.28f, -3.14f);
  fill(e.Photon_mvaID, np, 2.0f, -1.0f);
  e.nTau = static_cast<std::uint32_t>(nt);
  fill(e.Tau_pt, nt, 100.0f, 20.0f);
  fill(e.Tau_eta, nt, 4.6f, -2.3f);
  fill(e.Tau_phi, nt, 6.28f, -3.14f);
}

#endif
