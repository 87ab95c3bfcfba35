//===- HFTranslation.h - qeff-translate registrations for HF import -*- C++ -*-===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_HF_IMPORTERS_HFTRANSLATION_H
#define QEFF_FRONTEND_HF_IMPORTERS_HFTRANSLATION_H

namespace qeff::hf {
/// Registers `--import-hf` (checkpoint -> qeff IR) and `--import-hf-summary`.
/// Both take the checkpoint's config.json as input file (qeff-translate also
/// accepts the checkpoint directory).
void registerHFImportTranslations();
} // namespace qeff::hf

#endif // QEFF_FRONTEND_HF_IMPORTERS_HFTRANSLATION_H
