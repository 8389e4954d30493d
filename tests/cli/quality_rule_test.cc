#include "cli/quality_rule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

namespace rigel::cli {
namespace {

TEST(QualityRule, AccuracyTwoPointsLossTwoPercentOthersUnchecked) {
  const std::map<std::string, double> serial = {
      {"epoch", 2}, {"train_loss", 0.40}, {"test_accuracy", 0.849}};
  EXPECT_EQ(OutsideQualityRule(serial, serial), "");
  // Better is always within; worse by less than the bound is too.
  EXPECT_EQ(
      OutsideQualityRule(serial, {{"epoch", 2}, {"train_loss", 0.39}, {"test_accuracy", 0.9}}), "");
  EXPECT_EQ(
      OutsideQualityRule(serial, {{"epoch", 2}, {"train_loss", 0.4079}, {"test_accuracy", 0.83}}),
      "");
  EXPECT_EQ(
      OutsideQualityRule(serial, {{"epoch", 2}, {"train_loss", 0.4081}, {"test_accuracy", 0.849}}),
      "train_loss 0.4081 against serial 0.4: more than 2% above");
  EXPECT_EQ(
      OutsideQualityRule(serial, {{"epoch", 2}, {"train_loss", 0.40}, {"test_accuracy", 0.828}}),
      "test_accuracy 0.828 against serial 0.849: more than 2 points below");
  EXPECT_EQ(OutsideQualityRule(serial, {{"epoch", 2}, {"train_loss", 0.4}}),
            "test_accuracy not printed");
  EXPECT_EQ(OutsideQualityRule({{"loss", 2.3}}, {{"loss", std::nan("")}}),
            "loss nan against serial 2.3: not finite");
  // Numbers that measure no quality are not checked (a counter, LDA's
  // mean_log_p).
  EXPECT_EQ(OutsideQualityRule({{"iter", 29}, {"mean_log_p", -0.004}, {"loglik", -4.11}},
                               {{"iter", 28}, {"mean_log_p", -0.03}, {"loglik", -4.12}}),
            "");
  EXPECT_FALSE(HasQualityMeasure({{"iter", 29}, {"mean_log_p", -0.004}}));
  EXPECT_TRUE(HasQualityMeasure({{"iter", 29}, {"loglik", -4.11}}));
  EXPECT_TRUE(HasQualityMeasure({{"epoch", 1}, {"test_rmse", 0.9}}));
}

TEST(QualityRule, PercentagesAndLogLikelihoods) {
  // An accuracy printed in percent: 2 points are 2.0.
  EXPECT_EQ(OutsideQualityRule({{"acc", 84.9}}, {{"acc", 83.0}}), "");
  EXPECT_NE(OutsideQualityRule({{"acc", 84.9}}, {{"acc", 82.8}}), "");
  // A log-likelihood may not fall more than 2% of its size (LDA: -4.11).
  EXPECT_EQ(OutsideQualityRule({{"loglik", -4.11}}, {{"loglik", -4.19}}), "");
  EXPECT_EQ(OutsideQualityRule({{"loglik", -4.11}}, {{"loglik", -4.20}}),
            "loglik -4.2 against serial -4.11: more than 2% below");
  EXPECT_EQ(OutsideQualityRule({{"loglik", -4.11}}, {{"loglik", -3.0}}), "");
}

}  // namespace
}  // namespace rigel::cli
